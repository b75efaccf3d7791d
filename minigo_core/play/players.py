"""Players for matches and for the GTP server: a model (MCTS; `model_player`), an outside GTP program,
uniformly random moves, plain Monte-Carlo tree search (`uct:N`); `make_player` makes the one a spec names.
The base class is `player.Player`; `ModelPlayer`, `RESIGN`, `Player` and `PlayerError` are importable from
here too. A model's search is a `config.SearchSettings`; `PlayerSetup` says how a match makes its players.

A player is told the game's board size, komi and seed (`new_game`), asked for a move in a position whose
`to_play` is its colour (`genmove` -> a move, `None` for pass, or `RESIGN`), and told each move its opponent
played (`play`). The referee (`minigo_core.play.referee`) keeps the authoritative `go.Position`; players that
keep their own board (GTP programs) are kept in step through `play`.

Player specs (command line and config `evaluate.opponents`):

- `gen0`, `genN`, `previous` -- the model file `{root}/models/genNNNN.safetensors` (`previous`: generation
  G-1)
- `gnugo:LEVEL` -- GNU Go at that level through GTP (`gtp_program.gnugo_argv`: Chinese rules, simple ko,
  no suicide, `--capture-all-dead`, so its games score the same under Tromp-Taylor)
- `gnugo:LEVEL+rP`, `uct:N+rP` -- that player, except that on P% of its moves (a seeded coin per move) it
  plays `random`'s move instead (`MixedPlayer`): cheap, smoothly graded ladder rungs where neither `uct:N` nor
  GNU Go has one (between `random` and `uct:1`, between the costly top `uct:N` and GNU Go level 1)
- `random` -- a uniformly random legal move: every legal point and pass (always legal) with equal
  probability. It fills its own eyes and passes about once per legal-move count; it is the floor of the
  rating scale, not a playout policy.
- `uct:N` -- plain UCT with N random playouts per move and no network (`engine.uct_genmove`, the compiled
  search of `csrc/uct.cpp`): the reference rungs between `random` and GNU Go; deterministic for the game's
  seed and the position, it never resigns.
- `gtp:<command line>` -- any GTP program, for example `gtp:/usr/games/gnugo --mode gtp --level 5`
- anything else -- a path or URL of a model file
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from minigo_core.base.config import SearchSettings
from minigo_core.base.playerspec import HELP, MODEL_SUFFIXES, PlayerSpec, PlayerSpecError
from minigo_core.base.runtime import Runtime
from minigo_core.data import layout, storage
from minigo_core.game import coords, go
from minigo_core.nn.inference import load_for_inference
from minigo_core.play.gtp_program import GTPClient, GTPError, find_pachi, gnugo_argv
from minigo_core.play.model_player import ModelPlayer
from minigo_core.play.player import RESIGN, Player, PlayerError
from minigo_core.search import engine

__all__ = ["RESIGN", "ModelPlayer", "Player", "PlayerError", "make_player", "resolve_spec"]
from minigo_core.play.timecontrol import TimeSettings

STARTUP_TIMEOUT = 60.0  # seconds an outside program gets to answer its first command


@dataclass(frozen=True)
class ResolvedPlayer:
    """A player spec resolved for one match: `name` is the player's identity in results files and ratings."""

    spec: str
    kind: str  # model | gnugo | random | uct | gtp
    name: str
    url: str | None = None
    generation: int | None = None
    level: int | None = None
    playouts: int | None = None
    argv: tuple[str, ...] = ()
    random_percent: float | None = None
    komi_points: float | None = None  # SPEC+kP / SPEC-kP: komi received (negative: given)

    def describe(self) -> dict:
        out: dict[str, Any] = {"spec": self.spec, "kind": self.kind, "name": self.name}
        if self.url is not None:
            out["url"] = self.url
        if self.generation is not None:
            out["generation"] = self.generation
        if self.level is not None:
            out["level"] = self.level
        if self.playouts is not None:
            out["playouts"] = self.playouts
        if self.random_percent is not None:
            out["random_percent"] = self.random_percent
        if self.komi_points is not None:
            out["komi_points"] = self.komi_points
        if self.argv:
            out["argv"] = list(self.argv)
        return out


@dataclass(frozen=True)
class PlayerSetup:
    """How a match makes its players from their specs: a model's search, its network's backend and DSP
    cores, and the GNU Go that `gnugo:L` specs run (None: the one installed)."""

    search: SearchSettings = field(default_factory=SearchSettings)
    backend: str = "dsp"
    threads: int = 1
    gnugo: str | None = None

    def resolve(self, text: str, root: str | None = None, generation: int | None = None) -> ResolvedPlayer:
        return resolve_spec(text, root, generation, self.gnugo)

    def make(
        self, spec: ResolvedPlayer, search: SearchSettings | None = None, nets: dict | None = None
    ) -> Player:
        """The player `spec` names; a model searches as `search` says (default: this setup's)."""
        return make_player(spec, search or self.search, self.backend, self.threads, nets=nets)


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
        return ResolvedPlayer(
            spec.text,
            "gnugo",
            spec.rating_name(),
            level=spec.level,
            argv=tuple(argv),
            random_percent=spec.random_percent,
            komi_points=spec.komi_points,
        )
    if spec.kind == "random":
        return ResolvedPlayer(spec.text, "random", "random")
    if spec.kind == "uct":
        return ResolvedPlayer(
            spec.text,
            "uct",
            spec.rating_name(),
            playouts=spec.playouts,
            random_percent=spec.random_percent,
            komi_points=spec.komi_points,
        )
    if spec.kind == "pachi":
        try:
            argv = (find_pachi(),)
        except FileNotFoundError as exc:
            raise PlayerError(f"player spec {spec.text!r}: {exc}") from None
        return ResolvedPlayer(
            spec.text,
            "pachi",
            spec.rating_name(),
            playouts=spec.playouts,
            argv=argv,
            komi_points=spec.komi_points,
        )
    if spec.kind == "gtp":
        return ResolvedPlayer(spec.text, "gtp", spec.text, argv=spec.command)
    # A model file. Inside a run's models/ folder it keeps its generation name, so ratings join up.
    if spec.generation is None and not spec.text.endswith(MODEL_SUFFIXES) and not storage.exists(spec.text):
        raise PlayerError(
            f"player spec {spec.text!r} is not a known spec or an existing model file; use {HELP}"
        )
    return ResolvedPlayer(spec.text, "model", spec.rating_name(), url=spec.text, generation=spec.generation)


# --------------------------------------------------------------------------------------------------- players


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


class UCTPlayer(Player):
    """`uct:N`: plain UCT with `playouts` random playouts per move, no network (`engine.uct_genmove`).

    Each move is searched from scratch on the position replayed from the empty board (`position.recent`),
    seeded by the game's seed and the number of moves played, so a game is reproducible move by move. It
    never resigns; it passes when the search's most visited move is the pass."""

    def __init__(self, playouts: int, name: str | None = None, exploration: float = 0.0) -> None:
        if int(playouts) < 1:
            raise PlayerError(f"uct player needs at least one playout per move, got {playouts}")
        self.playouts = int(playouts)
        self.exploration = float(exploration)
        self.name = name or f"uct:{self.playouts}"
        self._seed = 0
        self.last_winrate: float | None = None

    def new_game(self, board_size: int, komi: float, seed: int) -> None:
        self._seed = int(seed)
        self.last_winrate = None

    def genmove(self, position: go.Position) -> coords.Move | str:
        n = position.board_size
        if position.is_game_over():
            return None  # nothing left to search (a GTP controller may still ask)
        if position.n != len(position.recent):
            raise PlayerError(f"{self.name} plays only positions reached by moves from the empty board")
        moves = [n * n if m is None else coords.to_flat(m, n) for m in position.recent]
        try:
            chosen = engine.uct_genmove(n, position.komi, moves, self.playouts, self._seed, self.exploration)
        except ValueError as exc:
            raise PlayerError(f"{self.name}: {exc}") from None
        self.last_winrate = chosen.winrate
        return coords.from_flat(chosen.move, n)

    def info(self) -> dict:
        out: dict[str, Any] = {"playouts": self.playouts}
        if self.exploration > 0:
            out["exploration"] = self.exploration  # else uct.cpp's kUctExploration
        return out


class GTPPlayer(Player):
    """An outside program over GTP (`minigo_core.play.gtp_program`), kept in step with the referee's board."""

    def __init__(self, argv: list[str] | tuple[str, ...], name: str, timeout: float = 600.0) -> None:
        self.name = name
        self.argv = list(argv)
        try:
            self.client = GTPClient(self.argv, timeout=timeout)
        except GTPError as exc:
            raise PlayerError(f"GTP program {shlex.join(self.argv)} failed to start: {exc}") from exc
        try:
            self.program_name = self.client.send("name", timeout=min(timeout, STARTUP_TIMEOUT))
            self.program_version = self.client.send("version")
            self.commands = set(self.client.send("list_commands").split())
        except GTPError as exc:
            self.client.close(kill=True)
            raise PlayerError(f"GTP program {shlex.join(self.argv)} does not answer GTP: {exc}") from exc
        self.board_size = 0

    def _send(self, command: str) -> str:
        try:
            return self.client.send(command)
        except GTPError as exc:
            raise PlayerError(f"GTP program {self.name} failed on {command!r}: {exc}") from exc

    def new_game(self, board_size: int, komi: float, seed: int) -> None:
        self.board_size = board_size
        self._send(f"boardsize {board_size}")
        self._send("clear_board")
        self._send(f"komi {komi:g}")
        if "set_random_seed" in self.commands:  # GNU Go: the game's seed makes its play reproducible
            self._send(f"set_random_seed {int(seed) % 2**31}")

    def genmove(self, position: go.Position) -> coords.Move | str:
        colour = "b" if position.to_play == go.BLACK else "w"
        answer = self._send(f"genmove {colour}").strip()
        if answer.lower() == "resign":
            return RESIGN
        try:
            return coords.from_gtp(answer, position.board_size)
        except ValueError as exc:
            raise PlayerError(f"GTP program {self.name} answered genmove with {answer!r}: {exc}") from None

    def play(self, position: go.Position, move: coords.Move) -> None:
        colour = "b" if position.to_play == go.BLACK else "w"
        self._send(f"play {colour} {coords.to_gtp(move, position.board_size)}")

    def set_time_settings(self, settings: TimeSettings) -> None:
        if settings.kind == "byoyomi" and "kgs-time_settings" in self.commands:
            self._send(settings.kgs_command())
        elif "time_settings" in self.commands:
            self._send(settings.gtp_command())

    def time_left(self, colour: int, seconds: float, stones: int) -> None:
        if "time_left" in self.commands:  # GTP's time is whole seconds: rounded down, never flattering
            self._send(f"time_left {'b' if colour == go.BLACK else 'w'} {max(0, int(seconds))} {stones}")

    def final_score(self) -> str | None:
        if "final_score" not in self.commands:
            return None
        return self._send("final_score").strip()

    def info(self) -> dict:
        # the results file's keys (its `players`), kept as they were
        return {"engine_name": self.program_name, "engine_version": self.program_version}

    def close(self) -> None:
        self.client.close()


class PachiPlayer(GTPPlayer):
    """`pachi:N`: Pachi, a UCT program, with N playouts a move (`-t =N`, which also makes it ignore GTP time
    settings), one thread, no pondering, Chinese rules, `pass_all_alive` (it passes only once its dead stones
    are off the board, so Tromp-Taylor counts its games fairly). Pachi takes its seed on the command line
    only (`-s`), so each game starts a fresh process seeded by the game's seed: a game is reproducible move
    by move (Pachi is deterministic for its seed with one thread and no pondering).

    `client` is a new process every game, so a game's Pachi CPU is not the difference of `client`'s CPU
    before and after it: `program_cpu_seconds` counts every process this player has run, closed ones too."""

    def __init__(self, path: str, playouts: int, name: str, timeout: float = 600.0) -> None:
        self.path, self.playouts, self.timeout = path, int(playouts), timeout
        self._cpu_closed = 0.0  # CPU seconds of this player's closed Pachi processes (read before closing)
        super().__init__(self.pachi_argv(0), name, timeout=timeout)  # started now: a broken Pachi fails early

    def pachi_argv(self, seed: int) -> list[str]:
        """Pachi's command line for a game seeded by `seed` (`argv`, from GTPPlayer, is the running one)."""
        return [self.path, "-r", "chinese", "-t", f"={self.playouts}", "-s", str(int(seed) % 2**31),
                "threads=1,pondering=0,pass_all_alive"]  # fmt: skip

    def new_game(self, board_size: int, komi: float, seed: int) -> None:
        self.close()
        super().__init__(self.pachi_argv(seed), self.name, timeout=self.timeout)
        super().new_game(board_size, komi, seed)

    def program_cpu_seconds(self) -> float:
        """CPU seconds of all the Pachi processes this player has run so far (a game's: the difference)."""
        return self._cpu_closed + (0.0 if self.client is None else self.client.cpu_seconds())

    def info(self) -> dict:
        return {**super().info(), "playouts": self.playouts}

    def close(self) -> None:
        if self.client is not None:
            self._cpu_closed += self.client.cpu_seconds()
            super().close()
            self.client = None


class MixedPlayer(Player):
    """`SPEC+rP`: `base`, except that on `percent`% of its moves it plays `RandomPlayer`'s move instead (any
    legal point or pass, uniformly); `base` is told that move with `play`, so a program with a board of its
    own (GNU Go over GTP) stays in step.

    Two seeded draws per move of its own (`new_game`'s seed): the coin, and the random move's index, drawn
    every move, so one move's choice does not shift the later coins. A game is reproducible move by move when
    `base` is (GNU Go with `set_random_seed`, `uct:N`)."""

    def __init__(self, base: Player, percent: float, name: str) -> None:
        if not 0.0 < float(percent) < 100.0:
            base.close()
            raise PlayerError(f"{name}: the random share must be 0 < P < 100, got {percent}")
        self.base = base
        self.percent = float(percent)
        self.name = name
        self.client = getattr(base, "client", None)  # an outside program's process (its CPU time is counted)
        self._rng = np.random.default_rng(0)
        self.random_moves = 0

    def new_game(self, board_size: int, komi: float, seed: int) -> None:
        self.base.new_game(board_size, komi, seed)
        self._rng = np.random.default_rng([int(seed) % 2**63, 0x5EED])
        self.random_moves = 0

    def genmove(self, position: go.Position) -> coords.Move | str:
        coin, draw = self._rng.random(2)
        if coin * 100.0 < self.percent and not position.is_game_over():
            legal = np.flatnonzero(position.all_legal_moves())
            flat = int(legal[min(int(draw * legal.size), legal.size - 1)])
            move = coords.from_flat(flat, position.board_size)
            self.base.play(position, move)  # `play` tells the side to move's move: ours
            self.random_moves += 1
            return move
        return self.base.genmove(position)

    def play(self, position: go.Position, move: coords.Move) -> None:
        self.base.play(position, move)

    def final_score(self) -> str | None:
        return self.base.final_score()

    def info(self) -> dict:
        return {**self.base.info(), "random_percent": self.percent}

    def close(self) -> None:
        self.base.close()


def make_player(
    spec: ResolvedPlayer,
    search: SearchSettings | None,
    backend: str = "dsp",
    threads: int = 1,
    gtp_timeout: float = 600.0,
    nets: dict | None = None,
    engine_name: str | None = None,
) -> Player:
    """Create the player a spec names, a model searching as `search` says (None: `SearchSettings()`); `nets`
    shares one loaded network between players. `engine_name`: compiled or python (default: compiled on the
    dsp backend, see `ModelPlayer`)."""
    if spec.komi_points is not None:
        player = make_player(replace(spec, komi_points=None), search, backend, threads, gtp_timeout, nets,
                             engine_name)  # fmt: skip
        player.name, player.komi_points = spec.name, float(spec.komi_points)
        return player
    if spec.random_percent is not None:
        base = make_player(replace(spec, random_percent=None, name=spec.name.split("+r")[0]), search,
                           gtp_timeout=gtp_timeout)  # fmt: skip
        return MixedPlayer(base, spec.random_percent, spec.name)
    if spec.kind == "random":
        return RandomPlayer(spec.name)
    if spec.kind == "uct":
        assert spec.playouts is not None
        return UCTPlayer(spec.playouts, spec.name)
    if spec.kind in ("gnugo", "gtp"):
        return GTPPlayer(spec.argv, spec.name, timeout=gtp_timeout)
    if spec.kind == "pachi":
        assert spec.playouts is not None
        return PachiPlayer(spec.argv[0], spec.playouts, spec.name, timeout=gtp_timeout)

    assert spec.url is not None
    engine_name = engine_name or ("compiled" if backend == "dsp" else "python")
    key = f"{engine_name}:{spec.url}"
    net = (nets or {}).get(key)
    if net is None:
        net = load_network(spec.url, backend, threads, engine_name)
        if nets is not None:
            nets[key] = net
    return ModelPlayer(net, search or SearchSettings(), name=spec.name, engine_name=engine_name)


def load_network(url: str, backend: str, threads: int, engine_name: str) -> Any:
    """A model file's network for play, on `threads` DSP cores (or torch threads): in the compiled engine's
    library (`compiled`, dsp only) or through `nn/inference.py` (`python`: the fused network, or torch)."""
    runtime = Runtime(threads=threads)
    if engine_name == "compiled":
        if backend != "dsp":
            raise PlayerError("the compiled engine runs the network in the dsp kernels: use the dsp backend")
        return engine.load_network(url, runtime)
    return load_for_inference(url, backend=backend, runtime=runtime)
