"""Generation of sentences from vectors with a trained decoder: greedy and beam search."""
