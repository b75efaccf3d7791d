"""Layer 4, search and players: the reference MCTS (`mcts`), players of every kind (`players`), and the GTP
client that talks to outside engines such as GNU Go (`gtp_client`).
"""
