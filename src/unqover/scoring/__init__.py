"""Scoring: the model side. Loading models, a scorer for each model family, and the batching, resumable runner
that drives them into a run folder."""
