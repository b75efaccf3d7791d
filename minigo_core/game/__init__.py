"""Layer 2, the game: rules of Go (`go`, `coords`), a game's result string (`result`), input features, the 8
symmetries, SGF.

Pure Python and numpy; knows nothing of files, networks or search.
"""
