"""Scoring an episode: the one outcome scorer every environment uses, its parts combined by a declared config
(:mod:`.rewards`); answer matching lives in :mod:`stillweb.corpora.tasks.answer_match`."""
