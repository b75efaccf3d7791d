"""Layer 3, data on the shared filesystem: atomic storage, the run layout, game files and self-play job
records, the games-complete check, shards and the window, the match results file, what a generation consists
of (`schedule`), and whether two runs are the same run (`compare`).

Every artifact of a run is written here (through `storage`) at a path named by `layout`.
"""
