"""The fixed Elo ladder: its table, its calibration fit, rating players against it, choosing their opponents.

A ladder is a list of graded reference players (rungs: `random`, `uct:N`, `gnugo:L`, ...) with Elo ratings
fixed once by a calibration, anchored at GNU Go level 10 = 1800 (CGOS's 9x9 anchor). One JSON file per board
size, `config/ladder/{N}x{N}.json` in the repository:

    {"board_size": 9, "anchor": "gnugo:10", "anchor_elo": 1800.0,
     "rungs": [{"player": "random", "elo": ..., "ci95": [lo, hi], "games": n,           # increasing Elo
                "ci95_anchor": [lo, hi]}, ...],
     "provenance": {"command": ..., "seeds": ..., "cpu": ..., "date": ..., "cost": ...}}

The model throughout is `minigo_core.rating.bradley_terry`'s: P(i beats j) = 1 / (1 + 10^(-(R_i - R_j)/400)),
a draw half a win to each side. Internally ratings are in nats (natural-log odds); `ELO_PER_NAT` converts.

- `calibrate_fit`: the rungs' ratings, one Bradley-Terry fit (`fit_bradley_terry`) over all calibration games.
- `rate_with_fixed_rungs` / `rate_many`: one new player / several related players rated with the rungs held
  fixed (maximum a-posteriori, profile-likelihood intervals).
- `ladder_walk` (a module of its own) chooses the rungs a player being rated plays, and when it stops.

No games are played here and nothing here knows the command line: `minigo ladder` and the pipeline call it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from minigo_core.base.elo import ELO_PER_NAT, Z95
from minigo_core.data import storage
from minigo_core.data.layout import LADDER_DIR, REPO, calibrated_sizes, ladder_path  # noqa: F401 (re-exported)
from minigo_core.rating.bradley_terry import fit_bradley_terry, information, maximise

CGOS_ANCHOR = "gnugo:10"
CGOS_ANCHOR_ELO = 1800.0  # CGOS keeps GNU Go 3.7.10 level 10 at 1800 on 9x9
MAX_NEWTON_STEP = 5.0  # nats (~870 Elo): a Newton step from a start far from the rungs stays bounded
HALF_CHI2_95 = Z95 * Z95 / 2.0  # a 95% profile interval: where the log-posterior drops by chi2(1, 0.95) / 2
_REQUIRED = ("board_size", "anchor", "anchor_elo", "rungs")
_RUNG_KEYS = ("player", "elo", "ci95", "games")
_FIX = "fix it or make it again with `minigo ladder calibrate`"
_NEW = "<the player being rated>"


class LadderError(ValueError):
    """A ladder file or ladder input that cannot be used; the message names it and says what to do."""


# -------------------------------------------------------------------------------------------------- table


@dataclass(frozen=True)
class Rung:
    """One reference player and its calibrated rating.

    `ci95`: its 95% interval with the other rungs held at their ratings (BayesElo's convention, and the one
    `rate_with_fixed_rungs` gives a rated player): how well its own games place it among its neighbours.
    `ci95_anchor` (None in tables written before it): the interval relative to the anchor, which adds up
    every link of the chain of matches between the rung and the anchor (`calibrate_fit`)."""

    player: str
    elo: float
    ci95: tuple[float, float]
    games: int
    ci95_anchor: tuple[float, float] | None = None

    def to_json(self) -> dict:
        out: dict = {
            "player": self.player,
            "elo": self.elo,
            "ci95": [self.ci95[0], self.ci95[1]],
            "games": self.games,
        }
        if self.ci95_anchor is not None:
            out["ci95_anchor"] = [self.ci95_anchor[0], self.ci95_anchor[1]]
        return out


@dataclass
class Ladder:
    """The rungs of one board size in increasing order of rating, the anchor, and how the table was made."""

    board_size: int
    anchor: str
    anchor_elo: float
    rungs: list[Rung]
    provenance: dict = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        return [r.player for r in self.rungs]

    def ratings(self) -> dict[str, float]:
        """rung name -> Elo."""
        return {r.player: r.elo for r in self.rungs}

    def rung(self, name: str) -> Rung:
        for r in self.rungs:
            if r.player == name:
                return r
        raise LadderError(
            f"{name!r} is not a rung of the {self.board_size}x{self.board_size} ladder; rungs: "
            f"{', '.join(self.names)}"
        )

    def to_json(self) -> dict:
        return {
            "board_size": self.board_size,
            "anchor": self.anchor,
            "anchor_elo": self.anchor_elo,
            "rungs": [r.to_json() for r in sorted(self.rungs, key=lambda r: r.elo)],
            "provenance": self.provenance,
        }

    @classmethod
    def from_json(cls, data: object, source: str = "<ladder>") -> Ladder:
        """A ladder from its JSON object, validated; errors name `source` and what is wrong."""
        if not isinstance(data, dict):
            raise LadderError(f"{source}: a ladder is a JSON object, got {type(data).__name__}; {_FIX}")
        missing = [k for k in _REQUIRED if k not in data]
        if missing:
            raise LadderError(f"{source}: missing key(s) {', '.join(missing)}; {_FIX}")
        if not isinstance(data["rungs"], list):
            raise LadderError(f"{source}: 'rungs' must be a list of rungs; {_FIX}")
        rungs = [_rung_from_json(entry, i, source) for i, entry in enumerate(data["rungs"])]
        provenance = data.get("provenance", {})
        if not isinstance(provenance, dict):
            raise LadderError(f"{source}: 'provenance' must be an object; {_FIX}")
        board_size, anchor_elo = data["board_size"], data["anchor_elo"]
        if not isinstance(board_size, int) or isinstance(board_size, bool):
            raise LadderError(f"{source}: 'board_size' must be an integer, got {board_size!r}; {_FIX}")
        if not _is_number(anchor_elo):
            raise LadderError(f"{source}: 'anchor_elo' must be a number, got {anchor_elo!r}; {_FIX}")
        ladder = cls(board_size, data["anchor"], float(anchor_elo), rungs, provenance)
        ladder.validate(source)
        return ladder

    def validate(self, source: str = "<ladder>") -> None:
        """Raise LadderError (naming `source`) unless the table is usable: rungs present, named once,
        strictly increasing, intervals around their ratings, the anchor a rung at `anchor_elo`."""
        if not 2 <= self.board_size <= 25:
            raise LadderError(f"{source}: board size {self.board_size} is not in 2..25; {_FIX}")
        if not self.rungs:
            raise LadderError(f"{source}: the ladder has no rungs; {_FIX}")
        names = self.names
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise LadderError(f"{source}: rung(s) listed twice: {', '.join(duplicates)}; {_FIX}")
        for lower, upper in zip(self.rungs, self.rungs[1:], strict=False):
            if not upper.elo > lower.elo:
                raise LadderError(
                    f"{source}: rungs not in increasing order of rating: {lower.player} ({lower.elo}) is "
                    f"followed by {upper.player} ({upper.elo}); {_FIX}"
                )
        for r in self.rungs:
            if not r.ci95[0] <= r.elo <= r.ci95[1]:
                raise LadderError(
                    f"{source}: rung {r.player}: ci95 {list(r.ci95)} does not contain its elo {r.elo}; {_FIX}"
                )
        if self.anchor not in names:
            raise LadderError(f"{source}: the anchor {self.anchor!r} is not a rung; {_FIX}")
        if self.rung(self.anchor).elo != self.anchor_elo:
            raise LadderError(
                f"{source}: the anchor {self.anchor} is rated {self.rung(self.anchor).elo}, "
                f"not anchor_elo {self.anchor_elo}; {_FIX}"
            )


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _rung_from_json(entry: object, i: int, source: str) -> Rung:
    where = f"{source}: rungs[{i}]"
    if not isinstance(entry, dict):
        raise LadderError(f"{where} must be an object with {', '.join(_RUNG_KEYS)}; {_FIX}")
    missing = [k for k in _RUNG_KEYS if k not in entry]
    if missing:
        raise LadderError(f"{where}: missing key(s) {', '.join(missing)}; {_FIX}")
    player, elo, ci, games = (entry[k] for k in _RUNG_KEYS)
    if not isinstance(player, str) or not player:
        raise LadderError(f"{where}: 'player' must be a player spec such as uct:64, got {player!r}; {_FIX}")
    if not _is_number(elo):
        raise LadderError(f"{where} ({player}): 'elo' must be a finite number, got {elo!r}; {_FIX}")
    if not (isinstance(ci, list) and len(ci) == 2 and all(_is_number(x) for x in ci)):
        raise LadderError(f"{where} ({player}): 'ci95' must be [low, high], got {ci!r}; {_FIX}")
    if not isinstance(games, int) or isinstance(games, bool) or games < 0:
        raise LadderError(f"{where} ({player}): 'games' must be a count >= 0, got {games!r}; {_FIX}")
    anchored = entry.get("ci95_anchor")
    if anchored is not None and not (
        isinstance(anchored, list) and len(anchored) == 2 and all(_is_number(x) for x in anchored)
    ):
        raise LadderError(f"{where} ({player}): 'ci95_anchor' must be [low, high], got {anchored!r}; {_FIX}")
    return Rung(
        player,
        float(elo),
        (float(ci[0]), float(ci[1])),
        games,
        None if anchored is None else (float(anchored[0]), float(anchored[1])),
    )


def load_ladder(path: str | Path) -> Ladder:
    """A ladder file, read and validated (LadderError naming the file and what is wrong)."""
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise LadderError(f"{path}: cannot read the ladder ({exc.strerror or exc})") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LadderError(f"{path}: not JSON ({exc}); {_FIX}") from exc
    return Ladder.from_json(data, str(path))


def read_ladder(board_size: int, root: str | Path | None = None) -> Ladder:
    """The ladder of a board size from `ladder_path(board_size, root)`; a clear error when there is none."""
    path = ladder_path(board_size, root)
    if not path.is_file():
        sizes = ", ".join(str(s) for s in calibrated_sizes(root)) or "none"
        raise LadderError(
            f"no ladder for board size {board_size} ({path} does not exist); calibrated sizes: "
            f"{sizes}; make one with `minigo ladder calibrate --board-size {board_size}`"
        )
    ladder = load_ladder(path)
    if ladder.board_size != board_size:
        raise LadderError(
            f"{path}: holds board size {ladder.board_size}, not {board_size}; rename the file "
            f"or make it again with `minigo ladder calibrate --board-size {board_size}`"
        )
    return ladder


def write_ladder(ladder: Ladder, path: str | Path | None = None) -> Path:
    """Validate and write a ladder (atomically) to `path`, by default `ladder_path(ladder.board_size)`."""
    target = Path(path) if path is not None else ladder_path(ladder.board_size)
    ladder.validate(str(target))
    storage.write_text(str(target), json.dumps(ladder.to_json(), indent=2) + "\n")
    return target


# ------------------------------------------------------------------------------------------- calibration


def calibrate_fit(
    results: Iterable[tuple[str, str, float]],
    anchor: str = CGOS_ANCHOR,
    anchor_elo: float = CGOS_ANCHOR_ELO,
    prior_draws: float = 1.0,
) -> list[Rung]:
    """The rungs' ratings from every calibration game (player, opponent, score), in increasing order.

    One Bradley-Terry fit (`fit_bradley_terry`, its virtual-draws prior: `prior_draws` drawn games per pair
    that met), shifted so that `anchor` sits at `anchor_elo`. Two Wald intervals (elo +- 1.96 se) per rung:

    - `ci95`, with the other rungs held at their fitted ratings (se = 1 / sqrt of the rung's diagonal entry
      of the information matrix: its own games only). This is what BayesElo reports by default, and it is
      the uncertainty that matters when the table is used as it is meant to be, with its rungs held fixed:
      a player rated against rungs i and j is placed by their ratings relative to each other, never by
      the chain down from the anchor, which shifts every rating on the table alike.
    - `ci95_anchor`, relative to the anchor: `fit_bradley_terry` holds its anchor at 0 and inverts the
      information matrix with the anchor's row and column removed, so its standard errors are those of
      R_i - R_anchor. These widen with the rung's distance from the anchor in games (a chain of matches adds
      up its links' variances): the uncertainty of comparing this scale's numbers with another scale's.

    The anchor's intervals are [anchor_elo, anchor_elo]. A rung with no chain of games to the anchor, or an
    anchor that played no game, is a LadderError.
    """
    results = list(results)
    fit = fit_bradley_terry(results, anchor=anchor, prior_draws=prior_draws)
    if not fit.elo:
        raise LadderError("no calibration games to fit; play matches between neighbouring rungs first")
    if fit.anchor != anchor:
        raise LadderError(f"the anchor {anchor} played no calibration game; play it against its neighbours")
    if fit.unrated:
        raise LadderError(
            f"no chain of calibration games links {', '.join(fit.unrated)} to the anchor "
            f"{anchor}; play matches between them and the other rungs"
        )
    rungs = []
    for name, elo in fit.elo.items():
        centre = anchor_elo + elo
        half = Z95 * fit.held_stderr[name] if name != anchor else 0.0
        chain = Z95 * fit.stderr[name] if name != anchor else 0.0
        rungs.append(
            Rung(
                name,
                centre,
                (centre - half, centre + half),
                fit.games[name],
                (centre - chain, centre + chain),
            )
        )
    return sorted(rungs, key=lambda r: r.elo)


# ---------------------------------------------------------------------------------------------- ratings


@dataclass(frozen=True)
class Rating:
    """A player's rating on the ladder's scale: Elo, 95% interval, its games and its points in them."""

    elo: float
    ci95: tuple[float, float]
    games: int
    score: float = 0.0

    @property
    def half_width(self) -> float:
        return (self.ci95[1] - self.ci95[0]) / 2.0

    def to_json(self) -> dict:
        return {
            "elo": self.elo,
            "ci95": [self.ci95[0], self.ci95[1]],
            "games": self.games,
            "score": self.score,
        }


def _rung_elos(rungs: Ladder | Mapping[str, float] | Iterable[Rung]) -> dict[str, float]:
    if isinstance(rungs, Ladder):
        return rungs.ratings()
    if isinstance(rungs, Mapping):
        return {str(k): float(v) for k, v in rungs.items()}
    return {r.player: r.elo for r in rungs}


@dataclass
class _Problem:
    """Aggregated games: W[i, j] points i scored against j (prior included), fixed ratings, free players."""

    names: list[str]
    wins: np.ndarray
    games: np.ndarray  # real games only (symmetric)
    theta: np.ndarray  # nats; fixed entries hold the rungs' ratings
    free: list[int]
    prior_draws: float

    def posterior_wins(self) -> np.ndarray:
        """W plus the prior: each free player's `prior_draws` virtual draws, spread over its opponents in
        proportion to the games it played against each."""
        totals = self.games.sum(axis=1)
        share = np.zeros_like(self.games)
        for i in self.free:
            if totals[i] > 0:
                share[i] += self.games[i] / totals[i]
                share[:, i] += self.games[i] / totals[i]
        return self.wins + 0.5 * self.prior_draws * share


def _problem(
    triples: Iterable[tuple[str, str, float]],
    fixed: dict[str, float],
    prior_draws: float,
    players: Iterable[str] | None,
) -> _Problem:
    allowed = set(players) if players is not None else None
    index: dict[str, int] = {}
    kept = []
    for a, b, s in triples:
        for name in (a, b) if allowed is not None else ():
            if name not in fixed and name not in allowed:
                raise LadderError(
                    f"{name!r} is neither a rung nor a player being rated; rungs: {', '.join(fixed)}"
                )
        if not 0.0 <= s <= 1.0:
            raise LadderError(
                f"game score must be in [0, 1] (1 win, 0.5 draw, 0 loss), got {s!r}: {a} vs {b}"
            )
        if a == b or (a in fixed and b in fixed):
            continue  # says nothing about the free players
        for name in (a, b):
            index.setdefault(name, len(index))
        kept.append((index[a], index[b], float(s)))
    k = len(index)
    wins, games = np.zeros((k, k)), np.zeros((k, k))
    for i, j, s in kept:
        wins[i, j] += s
        wins[j, i] += 1.0 - s
        games[i, j] += 1.0
        games[j, i] += 1.0
    names = list(index)
    free = [i for i, n in enumerate(names) if n not in fixed]
    start = np.mean([fixed[n] for n in names if n in fixed]) / ELO_PER_NAT if len(free) < k else 0.0
    theta = np.array([fixed[n] / ELO_PER_NAT if n in fixed else start for n in names])
    return _Problem(names, wins, games, theta, free, prior_draws)


def _check_connected(problem: _Problem) -> None:
    """Every free player needs a chain of games to some rung, or its rating has no scale to sit on."""
    reached = {i for i in range(len(problem.names)) if i not in problem.free}
    stack = list(reached)
    while stack:
        i = stack.pop()
        for j in np.nonzero(problem.games[i])[0]:
            if int(j) not in reached:
                reached.add(int(j))
                stack.append(int(j))
    lost = sorted(problem.names[i] for i in problem.free if i not in reached)
    if lost:
        raise LadderError(f"no games link {', '.join(lost)} to a ladder rung; play at least one rung first")


def _profile_bound(
    problem: _Problem,
    w: np.ndarray,
    theta_hat: np.ndarray,
    top: float,
    i: int,
    direction: float,
    scale: float,
) -> float:
    """Where the profile log-posterior of player i (the others re-maximised) drops HALF_CHI2_95 below its
    maximum `top`, on one side: bracket by doubling, then regula falsi (the profile is concave)."""
    others = [j for j in problem.free if j != i]

    def drop(t: float) -> float:
        start = theta_hat.copy()
        start[i] = t
        return top - maximise(start, w, others, tol=1e-8, max_step=MAX_NEWTON_STEP)[1]

    def gap(x: float) -> float:  # < 0 inside the interval, > 0 outside, increasing in x
        return drop(theta_hat[i] + direction * x) - HALF_CHI2_95

    a, fa = 0.0, -HALF_CHI2_95
    b, fb = max(scale, 0.05), gap(max(scale, 0.05))
    while fb < 0.0 and b < 100.0:
        a, fa, b = b, fb, 2.0 * b
        fb = gap(b)
    side = 0  # regula falsi, Illinois variant: halve the stale end's value
    for _ in range(100):
        c = (a * fb - b * fa) / (fb - fa)
        fc = gap(c)
        if abs(fc) < 1e-9 or b - a < 1e-7:
            break
        if fc < 0.0:
            a, fa, fb = c, fc, fb / 2.0 if side < 0 else fb
            side = -1
        else:
            b, fb, fa = c, fc, fa / 2.0 if side > 0 else fa
            side = 1
    return float(theta_hat[i] + direction * c)


def rate_many(
    games: Iterable[tuple[str, str, float]],
    rungs: Ladder | Mapping[str, float] | Iterable[Rung],
    players: Iterable[str] | None = None,
    prior_draws: float = 1.0,
    interval: str = "profile",
) -> dict[str, Rating]:
    """Joint ratings of several players from (player, opponent, score) games, the rungs' ratings held fixed.

    Games may be against rungs or between the free players (a model against its previous generation);
    games between two rungs are ignored. Every name that is not a rung is a free player (with `players`
    given, any other name is an error, which catches a misspelt rung). Maximum a-posteriori by Newton's
    method on the logistic log-likelihood plus the prior: each free player gets `prior_draws` virtual drawn
    games, spread over its opponents in proportion to the games it played against each, so 0% and 100%
    results stay finite while the prior weighs one game in all (unlike `fit_bradley_terry`'s one draw per
    pair, which would let the far rungs of an adaptive walk pull on the rating).

    `interval="profile"` (default): each player's 95% interval is where its profile log-posterior (the
    other free players re-maximised) falls chi2(1, 0.95)/2 = 1.92 below its maximum: asymmetric and honest
    for lopsided results (for 0/N the interval reaches far out on the open side, but stays finite).
    `interval="wald"`: elo +- 1.96 standard errors from the observed information (cheaper: the profile
    re-fits the others ~20 times per bound, ~3 s for 100 chained players). Neither includes the rungs' own
    calibration uncertainty (the rungs are held fixed).
    """
    if interval not in ("profile", "wald"):
        raise LadderError(f"interval must be 'profile' or 'wald', got {interval!r}")
    if prior_draws <= 0:
        raise LadderError(f"prior_draws must be > 0 so 0% and 100% results stay finite, got {prior_draws}")
    fixed = _rung_elos(rungs)
    problem = _problem(games, fixed, prior_draws, players)
    if not problem.free:
        return {}
    _check_connected(problem)
    w = problem.posterior_wins()
    theta, top, _ = maximise(problem.theta, w, problem.free, max_step=MAX_NEWTON_STEP)
    info = information(theta, w + w.T)[np.ix_(problem.free, problem.free)]
    se = np.sqrt(np.maximum(np.diag(np.linalg.inv(info)), 0.0))
    out = {}
    for k, i in enumerate(problem.free):
        if interval == "wald":
            lo, hi = theta[i] - Z95 * se[k], theta[i] + Z95 * se[k]
        else:
            lo = _profile_bound(problem, w, theta, top, i, -1.0, Z95 * se[k])
            hi = _profile_bound(problem, w, theta, top, i, +1.0, Z95 * se[k])
        out[problem.names[i]] = Rating(
            elo=float(theta[i] * ELO_PER_NAT),
            ci95=(float(lo * ELO_PER_NAT), float(hi * ELO_PER_NAT)),
            games=int(problem.games[i].sum()),
            score=float(problem.wins[i].sum()),
        )
    return out


def rate_with_fixed_rungs(
    games: Iterable[tuple[str, float]],
    rungs: Ladder | Mapping[str, float] | Iterable[Rung],
    prior_draws: float = 1.0,
    interval: str = "profile",
) -> Rating:
    """One new player's rating from its (rung, score) games against rungs whose ratings are held fixed.

    `rate_many` with a single free player: the maximum a-posteriori rating (one virtual draw in all, spread
    over the rungs it played in proportion to its games against each), Newton's method on the logistic
    log-likelihood, and the 95% profile-likelihood interval (`interval="wald"` for the Wald one). An
    opponent that is not a rung is a LadderError; no games at all too.
    """
    fixed = _rung_elos(rungs)
    triples = []
    for opponent, score in games:
        if opponent not in fixed:
            raise LadderError(f"{opponent!r} is not a ladder rung; rungs: {', '.join(fixed)}")
        triples.append((_NEW, opponent, score))
    if not triples:
        raise LadderError("no games to rate: play at least one rung (`next_rung` says which)")
    return rate_many(triples, fixed, players=[_NEW], prior_draws=prior_draws, interval=interval)[_NEW]
