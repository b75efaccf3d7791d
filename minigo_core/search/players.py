"""Players for matches and for the GTP engine: a model (MCTS), an outside GTP engine, uniformly random moves.

A player is told the game's board size, komi and seed (`new_game`), asked for a move in a position whose
`to_play` is its colour (`genmove` -> a move, `None` for pass, or `RESIGN`), and told each move its opponent
played (`play`). The referee (`minigo_core.jobs.evaluate`) keeps the authoritative `go.Position`; players that
keep their own board (GTP engines) are kept in step through `play`.

Player specs (command line and config `evaluate.opponents`):

- `gen0`, `genN`, `previous` -- the model file `{root}/models/genNNNN.safetensors` (`previous`: generation
  G-1)
- `gnugo:LEVEL` -- GNU Go at that level through GTP (`gtp_client.gnugo_argv`: Chinese rules, simple ko,
  no suicide, `--capture-all-dead`, so its games score the same under Tromp-Taylor)
- `random` -- a uniformly random legal move: every legal point and pass (always legal) with equal
  probability. It fills its own eyes and passes about once per legal-move count; it is the floor of the
  rating scale, not a playout policy.
- `gtp:<command line>` -- any GTP engine, for example `gtp:/usr/games/gnugo --mode gtp --level 5`
- anything else -- a path or URL of a model file
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

import numpy as np

from minigo_core.base.config import SelfplaySettings
from minigo_core.base.playerspec import HELP, MODEL_SUFFIXES, PlayerSpec, PlayerSpecError
from minigo_core.data import layout, storage
from minigo_core.game import coords, go
from minigo_core.nn.inference import load_for_inference
from minigo_core.search import mcts
from minigo_core.search.gtp_client import GTPClient, GTPError, gnugo_argv

RESIGN = "resign"
STARTUP_TIMEOUT = 60.0  # seconds an outside engine gets to answer its first command


class PlayerError(RuntimeError):
    """A player could not be created or did not produce a move (bad spec, engine failure, bad answer)."""


@dataclass(frozen=True)
class ResolvedPlayer:
    """A player spec resolved for one match: `name` is the player's identity in results files and ratings."""

    spec: str
    kind: str  # model | gnugo | random | gtp
    name: str
    url: str | None = None
    generation: int | None = None
    level: int | None = None
    argv: tuple[str, ...] = ()

    def describe(self) -> dict:
        out: dict[str, Any] = {"spec": self.spec, "kind": self.kind, "name": self.name}
        if self.url is not None:
            out["url"] = self.url
        if self.generation is not None:
            out["generation"] = self.generation
        if self.level is not None:
            out["level"] = self.level
        if self.argv:
            out["argv"] = list(self.argv)
        return out


def resolve_spec(
    text: str, root: str | None = None, generation: int | None = None, gnugo_path: str | None = None
) -> ResolvedPlayer:
    """A player spec resolved for a run; `PlayerError` says what is wrong and what to write instead."""
    try:
        spec = PlayerSpec.parse(text)
    except PlayerSpecError as exc:
        raise PlayerError(str(exc)) from None
    if spec.kind in ("generation", "previous"):
        if spec.kind == "previous" and (generation is None or generation < 1):
            raise PlayerError(f"player spec 'previous' needs --generation G >= 1 (got {generation})")
        if root is None:
            raise PlayerError(f"player spec {spec.text!r} needs the run root (--config)")
        g = spec.generation_at(generation)
        return ResolvedPlayer(
            spec.text, "model", spec.rating_name(generation), url=layout.model_path(root, g), generation=g
        )
    if spec.kind == "gnugo":
        try:
            argv = gnugo_argv(spec.level, gnugo_path)
        except FileNotFoundError as exc:
            raise PlayerError(f"player spec {spec.text!r}: {exc}") from None
        return ResolvedPlayer(spec.text, "gnugo", spec.rating_name(), level=spec.level, argv=tuple(argv))
    if spec.kind == "random":
        return ResolvedPlayer(spec.text, "random", "random")
    if spec.kind == "gtp":
        return ResolvedPlayer(spec.text, "gtp", spec.text, argv=spec.command)
    # A model file. Inside a run's models/ folder it keeps its generation name, so ratings join up.
    if spec.generation is None and not spec.text.endswith(MODEL_SUFFIXES) and not storage.exists(spec.text):
        raise PlayerError(
            f"player spec {spec.text!r} is not a known spec or an existing model file; use {HELP}"
        )
    return ResolvedPlayer(spec.text, "model", spec.rating_name(), url=spec.text, generation=spec.generation)


# --------------------------------------------------------------------------------------------------- players


class Player:
    """Base class: a player in a game refereed elsewhere."""

    name: str = "player"

    def new_game(self, board_size: int, komi: float, seed: int) -> None:
        """Start a new game (empty board); `seed` makes this game's random choices."""

    def genmove(self, position: go.Position) -> coords.Move | str:
        """A move for `position.to_play` (None = pass) or `RESIGN`."""
        raise NotImplementedError

    def play(self, position: go.Position, move: coords.Move) -> None:
        """The opponent (colour `position.to_play`) played `move` in `position`."""

    def final_score(self) -> str | None:
        """This player's own count of the finished game (`B+3.5`), if it has one (GTP engines)."""
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


class RandomPlayer(Player):
    """A uniformly random legal move: every legal point and pass (always legal) equally likely."""

    def __init__(self, name: str = "random") -> None:
        self.name = name
        self._rng = np.random.default_rng(0)

    def new_game(self, board_size: int, komi: float, seed: int) -> None:
        self._rng = np.random.default_rng(seed)

    def genmove(self, position: go.Position) -> coords.Move | str:
        legal = np.flatnonzero(position.all_legal_moves())
        return coords.from_flat(int(self._rng.choice(legal)), position.board_size)


class GTPPlayer(Player):
    """An outside engine over GTP (`minigo_core.search.gtp_client`), kept in step with the referee's board."""

    def __init__(self, argv: list[str] | tuple[str, ...], name: str, timeout: float = 600.0) -> None:

        self.name = name
        self.argv = list(argv)
        try:
            self.client = GTPClient(self.argv, timeout=timeout)
        except GTPError as exc:
            raise PlayerError(f"GTP engine {shlex.join(self.argv)} failed to start: {exc}") from exc
        try:
            self.engine_name = self.client.send("name", timeout=min(timeout, STARTUP_TIMEOUT))
            self.engine_version = self.client.send("version")
            self.commands = set(self.client.send("list_commands").split())
        except GTPError as exc:
            self.client.close(kill=True)
            raise PlayerError(f"GTP engine {shlex.join(self.argv)} does not answer GTP: {exc}") from exc
        self.board_size = 0

    def _send(self, command: str) -> str:

        try:
            return self.client.send(command)
        except GTPError as exc:
            raise PlayerError(f"GTP engine {self.name} failed on {command!r}: {exc}") from exc

    def new_game(self, board_size: int, komi: float, seed: int) -> None:
        self.board_size = board_size
        self._send(f"boardsize {board_size}")
        self._send("clear_board")
        self._send(f"komi {komi:g}")

    def genmove(self, position: go.Position) -> coords.Move | str:
        colour = "b" if position.to_play == go.BLACK else "w"
        answer = self._send(f"genmove {colour}").strip()
        if answer.lower() == "resign":
            return RESIGN
        try:
            return coords.from_gtp(answer, position.board_size)
        except ValueError as exc:
            raise PlayerError(f"GTP engine {self.name} answered genmove with {answer!r}: {exc}") from None

    def play(self, position: go.Position, move: coords.Move) -> None:
        colour = "b" if position.to_play == go.BLACK else "w"
        self._send(f"play {colour} {coords.to_gtp(move, position.board_size)}")

    def final_score(self) -> str | None:
        if "final_score" not in self.commands:
            return None
        return self._send("final_score").strip()

    def info(self) -> dict:
        return {"engine_name": self.engine_name, "engine_version": self.engine_version}

    def close(self) -> None:
        self.client.close()


@dataclass
class SearchSettings:
    """How a model player searches: fixed readouts, no root noise, softpick for the first moves, resign."""

    readouts: int = 32
    softpick_moves: int = 0  # moves (counted from the start of the game) chosen in proportion to visits
    resign_threshold: float = -0.9  # resign when the root value, from the mover's view, is below this


class ModelPlayer(Player):
    """A network with MCTS (`minigo_core.search.mcts.MCTSPlayer`): no root noise, fixed readouts, seeded
    softpick.

    Every move is a full search of `readouts` readouts; before move `softpick_moves` the move is drawn in
    proportion to visits (seeded per game, so E games are E different games), after it the most visited move.
    It resigns when the root value from its own view is below `resign_threshold` (-1 never resigns).
    """

    def __init__(self, net: Any, search: SearchSettings, name: str = "model", run_cfg: Any = None) -> None:
        self.net = net
        self.search = search
        self.name = name
        self.run_cfg = run_cfg
        self.board_size = int(net.cfg.board_size)
        self._rng = np.random.default_rng(0)
        self._mcts: Any = None

    def new_game(self, board_size: int, komi: float, seed: int) -> None:
        if board_size != self.board_size:
            raise PlayerError(
                f"model {self.name} plays {self.board_size}x{self.board_size}, not {board_size}x{board_size}"
            )
        self._rng = np.random.default_rng(seed)
        self._mcts = None

    def _new_search(self, komi: float) -> Any:

        base = self.run_cfg.selfplay if self.run_cfg is not None else SelfplaySettings()
        settings = mcts.settings_for_evaluation(base, max(1, int(self.search.readouts)))
        return mcts.MCTSPlayer(
            self.net,
            settings,
            self.board_size,
            komi,
            self._rng,
            feature_set=self.net.cfg.feature_set,
            softpick_moves=self.search.softpick_moves,
        )

    def genmove(self, position: go.Position) -> coords.Move | str:
        if position.board_size != self.board_size:
            raise PlayerError(
                f"model {self.name} plays {self.board_size}x{self.board_size}, "
                f"not {position.board_size}x{position.board_size}"
            )
        if position.is_game_over() or position.n >= 2 * self.board_size**2:
            return None  # nothing left to search: the game is over
        if self._mcts is None:
            self._mcts = self._new_search(position.komi)
        result = self._mcts.search(position, full_search=True, noise=False)
        self.last_value = float(result.root_value)
        if result.root_value < self.search.resign_threshold:
            return RESIGN
        return result.move

    def info(self) -> dict:
        out: dict[str, Any] = {
            "readouts": self.search.readouts,
            "softpick_moves": self.search.softpick_moves,
            "resign_threshold": self.search.resign_threshold,
            "model": self.net.cfg.to_dict(),
        }
        prov = getattr(self.net, "provenance", None)
        if prov:
            out["provenance"] = prov
        return out


def make_player(
    spec: ResolvedPlayer,
    search: SearchSettings,
    run_cfg: Any = None,
    backend: str = "dsp",
    threads: int = 1,
    gtp_timeout: float = 600.0,
    nets: dict | None = None,
) -> Player:
    """Create the player a spec names; `nets` (url -> net) shares one loaded network between players."""
    if spec.kind == "random":
        return RandomPlayer(spec.name)
    if spec.kind in ("gnugo", "gtp"):
        return GTPPlayer(spec.argv, spec.name, timeout=gtp_timeout)

    assert spec.url is not None
    net = (nets or {}).get(spec.url)
    if net is None:
        net = load_for_inference(spec.url, backend=backend, threads=threads)
        if nets is not None:
            nets[spec.url] = net
    return ModelPlayer(net, search, name=spec.name, run_cfg=run_cfg)
