"""``stillweb/Apps-v0``: the app world's environment, its prompt, its checks and its scripted agents."""
