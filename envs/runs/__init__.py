"""Run analytics: recording and replaying episodes, run summaries, run health and its plot series.

``cli/`` and ``server/`` read training runs through these modules."""
