"""The episode core every text environment is built on: the limits (``limits``), the step skeleton and the
ending ladder (``episode``), the typed counts (``counts``), the step's message delta (``messages``), spaces,
the step helpers, configs, degenerate-action flags, episode figures, context management, task loading and turn
budgets. (The snapshot cache is the corpora layer's: :mod:`stillweb.corpora.snapshot.shared`.)"""
