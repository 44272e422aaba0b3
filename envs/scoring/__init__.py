"""Scoring an episode: answer normalization and the reward parts combined by a declared config."""
