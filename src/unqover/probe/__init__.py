"""Model probes: scorers for each model family and the batching, resumable runner that drives them."""
