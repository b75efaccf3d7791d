"""Layer 6, reports of a run, read from its files alone: ratings and time to target (`ratings`), every plot
(`plots`: the one module that imports matplotlib), the status table (`status`), the live progress line
(`progress`), a game or model file as text (`inspect`).
"""
