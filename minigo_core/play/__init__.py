"""Play between two sides: players from their specs, outside programs, refereed games, matches, clocks."""
