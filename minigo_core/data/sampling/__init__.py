"""Which recorded positions of a game become training examples, how they are weighted, and their targets."""
