"""Layer 6, strength on the fixed Elo scale, the games that measure it included: the Bradley-Terry fit every
rating makes (`bradley_terry`), the ladder's table and its fits (`ladder`), which rung a rating plays next
(`ladder_walk`), its calibration (`calibration`; the adaptive one, `adaptive_calibration`), rating one player
on it (`ladder_rate`), a check of the table against new games (`ladder_check`), and what a game against each
rung costs (`rung_cost`).

The layer between `search` (which plays the games) and `report` (which only reads a run's files): the
modules here that play do it through `search`; `report` shows what they wrote.
"""
