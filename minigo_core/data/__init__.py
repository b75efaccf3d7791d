"""Layer 2, data on the shared filesystem: atomic storage, the run layout, game files, shards, the window.

Every artifact of a run is written here (through `storage`) at a path named by `layout`.
"""
