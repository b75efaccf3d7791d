"""The rules of Go, in Python and compiled (`csrc/`): board, result, features, symmetries, SGF, replay."""
