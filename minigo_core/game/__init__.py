"""Layer 1, the game: rules of Go (`go`, `coords`), input features, the 8 symmetries, SGF.

Pure Python and numpy; knows nothing of files, networks or search.
"""
