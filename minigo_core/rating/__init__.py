"""Strength on the fixed Elo scale: the ladder, its calibration, rating one player, the check."""
