"""Layer 5, search and play: the compiled self-play engine (`engine`) and the reference MCTS (`mcts`), a
self-play game and job (`selfplay`, `selfplay_job`), players of every kind (`players`), matches between two
players (`match`), the GTP client that talks to outside engines such as GNU Go (`gtp_client`), the analysis
of a position on the search a player plays (`analysis`); what a run will cost, measured by a probe self-play
job (`costplan`, `minigo plan`). The protocols that serve a model (GTP, KataGo's analysis) are in `gtp`.
"""
