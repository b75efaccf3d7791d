"""What every player is (`Player`: a player in a game refereed elsewhere), the resign answer and the error a
player raises; the kinds of player are in `players` and `model_player`."""

from __future__ import annotations

from minigo_core.game import coords, go
from minigo_core.play.timecontrol import TimeSettings

RESIGN = "resign"


class PlayerError(RuntimeError):
    """A player could not be created or did not produce a move (bad spec, a failed outside program, bad
    answer)."""


class Player:
    """Base class: a player in a game refereed elsewhere. `komi_points`: the komi it receives beyond the
    game's (reverse komi when negative, `SPEC+kP`/`SPEC-kP`); the referee (`referee.referee_game`) shifts the
    game's komi by it and tells both players the komi actually played."""

    name: str = "player"
    komi_points: float = 0.0

    def new_game(self, board_size: int, komi: float, seed: int) -> None:
        """Start a new game (empty board); `seed` makes this game's random choices."""

    def genmove(self, position: go.Position) -> coords.Move | str:
        """A move for `position.to_play` (None = pass) or `RESIGN`."""
        raise NotImplementedError

    def genmove_within(self, position: go.Position, seconds: float | None) -> coords.Move | str:
        """`genmove` with a time budget (None: none); players that do not search by time ignore it."""
        return self.genmove(position)

    def set_time_settings(self, settings: TimeSettings) -> None:
        """The game's clock (a referee that enforces one tells both players before the first move)."""

    def time_left(self, colour: int, seconds: float, stones: int) -> None:
        """GTP `time_left`: the clock of `colour` before its move (stones 0: main time)."""

    def play(self, position: go.Position, move: coords.Move) -> None:
        """The opponent (colour `position.to_play`) played `move` in `position`."""

    def final_score(self) -> str | None:
        """This player's own count of the finished game (`B+3.5`), if it has one (GTP programs)."""
        return None

    def info(self) -> dict:
        """What this player was (for results files)."""
        return {}

    def close(self) -> None:
        """Release processes and memory."""

    def __enter__(self) -> Player:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
