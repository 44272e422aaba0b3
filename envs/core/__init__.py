"""The episode core every text environment shares: spaces, the step tail, configs, the snapshot cache,
degenerate-action flags, episode figures, context management, task loading and turn budgets."""
