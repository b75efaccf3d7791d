"""Player specs: the one grammar that names a player, on the command line and in the config.

    gen0, gen7, genN     the model of that generation: {root}/models/genNNNN.safetensors
    previous             the model of the generation before the one evaluated (generation G-1)
    gnugo:LEVEL          GNU Go at LEVEL 0..10, through GTP
    gnugo:LEVEL+rP,      that player, except that on P% of its moves (0 < P < 100, a seeded coin per move) it
    uct:N+rP             plays `random`'s move instead (e.g. gnugo:1+r10): the graded mixtures that fill
                         the fixed Elo ladder where neither uct:N nor GNU Go has a rung
    pachi:N              Pachi (an outside MCTS program, built from source: `make pachi`), N >= 500 playouts a
                         move, one thread, no pondering, seeded per game: deterministic for its seed
    SPEC+kP, SPEC-kP     a reference player (gnugo:LEVEL, uct:N, pachi:N) receiving (+) or giving (-) P points
                         of komi (reverse komi): gnugo:10+k8 plays with 8 points more than the game's komi
                         gives its colour, gnugo:1-k10 with 10 fewer. The referee shifts the game's komi.
    random               a uniformly random legal move (the floor of the rating scale)
    uct:N                plain Monte-Carlo tree search, N random playouts per move (N >= 1; no network)
    gtp:COMMAND LINE     any GTP program, e.g. `gtp:/usr/games/gnugo --mode gtp --level 5`
    PATH                 a model file anywhere (command line only)

`PlayerSpec.parse` checks a spec; `slug` is its file-name form (`vs_gnugo-1.json`); `generation_at(g)` is
the generation whose model it names when generation g is evaluated; `rating_name(g)` is its identity in
results files and ratings (`gen0007`, `gnugo:1`, `random`, `uct:64`). The run config allows the
run-relative forms and the reference players (`CONFIG_KINDS`): generations, previous, gnugo, random, uct and
pachi, with their +rP / +kP / -kP suffixes.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field, replace
from decimal import Decimal

HELP = (
    "gen0, previous, genN, gnugo:LEVEL (LEVEL 0..10), random, uct:N (N playouts per move), "
    "gnugo:LEVEL+rP or uct:N+rP (P% of the moves random's, 0 < P < 100), pachi:N (N >= 500 playouts), "
    "SPEC+kP / SPEC-kP (that reference player receiving / giving P points of komi), "
    "'gtp:<command line>', or a model file"
)
CONFIG_HELP = (
    "gen0, previous, genN (N an integer), gnugo:LEVEL (LEVEL 0..10), random, uct:N (N playouts), or "
    "gnugo:LEVEL+rP / uct:N+rP (P% of the moves random's), pachi:N (N >= 500 playouts), or SPEC+kP / SPEC-kP "
    "(receiving / giving P points of komi)"
)
CONFIG_KINDS = ("generation", "previous", "gnugo", "random", "uct", "pachi")
UCT_HELP = (
    "uct:N with N a positive integer of playouts per move (e.g. uct:64), or uct:N+rP for P% of the moves "
    "random's, 0 < P < 100 (e.g. uct:1+r50)"
)
GNUGO_HELP = (
    "gnugo:LEVEL with LEVEL an integer 0..10 (e.g. gnugo:1), or gnugo:LEVEL+rP for P% of the moves "
    "random's, 0 < P < 100 (e.g. gnugo:1+r10)"
)
PACHI_HELP = (
    "pachi:N with N >= 500 playouts per move (Pachi's own floor: it never stops a search sooner), e.g. "
    "pachi:500, or pachi:N+kP / pachi:N-kP"
)
KOMI_HELP = (
    "SPEC+kP or SPEC-kP with SPEC gnugo:LEVEL, uct:N or pachi:N and 0 < P <= 100 points (e.g. gnugo:10+k8)"
)
_MIXED = re.compile(r"(?P<base>.*?)\+r(?P<percent>[0-9]+(?:\.[0-9]+)?)")
_KOMI = re.compile(r"(?P<base>.*?)(?P<sign>[+-])k(?P<points>[0-9]+(?:\.[0-9]+)?)")
PACHI_MIN_PLAYOUTS = 500  # Pachi's GJ_MINGAMES: its search never stops before this many playouts
MAX_KOMI_POINTS = 100.0
MODEL_SUFFIXES = (".safetensors", ".pt")
GNUGO_LEVELS = range(0, 11)


def _number(x: float) -> str:
    """A suffix's number as the spec's text writes it: the shortest digits that read back as the same float,
    never an exponent (`8`, `10.5`, `0.00001`), so `parse(spec.text) == spec` and `from_slug` round-trips."""
    text = format(Decimal(repr(float(x))), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


class PlayerSpecError(ValueError):
    """A player spec that does not parse; the message says what to write instead."""


def generation_name(generation: int) -> str:
    """A generation's name in results files and ratings: `gen0007`."""
    return f"gen{int(generation):04d}"


@dataclass(frozen=True)
class PlayerSpec:
    text: str
    kind: str  # generation | previous | gnugo | random | uct | pachi | gtp | file
    generation: int | None = None  # genN, or a model file named genNNNN.safetensors
    level: int | None = None  # gnugo:LEVEL
    random_percent: float | None = None  # gnugo:LEVEL+rP, uct:N+rP: P% of its moves random's
    playouts: int | None = None  # uct:N, pachi:N
    komi_points: float | None = None  # SPEC+kP: P points of komi received (negative: given)
    command: tuple[str, ...] = field(default=())  # gtp:COMMAND LINE

    @classmethod
    def parse(cls, text: str) -> PlayerSpec:
        text = text.strip() if isinstance(text, str) else text
        if not isinstance(text, str) or not text:
            raise PlayerSpecError(f"empty player spec {text!r}; use {HELP}")
        if text == "previous":
            return cls(text, "previous")
        if text == "random":
            return cls(text, "random")
        m = re.fullmatch(r"gen(\d+)", text)
        if m:
            return cls(text, "generation", generation=int(m.group(1)))
        if text.startswith(("gnugo:", "uct:", "pachi:")):
            return cls._reference(text)
        if text.startswith("gtp:"):
            command = tuple(shlex.split(text[4:]))
            if not command:
                raise PlayerSpecError(f"player spec {text!r} has no command line after 'gtp:'")
            return cls(text, "gtp", command=command)
        m = re.fullmatch(r"gen(\d+)\.(?:safetensors|pt)", os.path.basename(text.rstrip("/")))
        return cls(text, "file", generation=int(m.group(1)) if m else None)

    @classmethod
    def _reference(cls, text: str, shown: str | None = None) -> PlayerSpec:
        """`gnugo:LEVEL`, `uct:N`, `pachi:N`; their mixtures with `random` (`+rP`); their komi shifts (`+kP`,
        `-kP`). `shown`: the spec as written, which an error names (`text` is its base for a komi shift)."""
        shown = text if shown is None else shown
        shifted = _KOMI.fullmatch(text)
        if shifted:
            base = cls._reference(shifted["base"], shown)
            points = float(shifted["points"])
            if base.random_percent is not None or base.komi_points is not None:
                raise PlayerSpecError(f"player spec {shown!r}: one suffix at most (+rP or +kP/-kP), not both")
            if not 0.0 < points <= MAX_KOMI_POINTS:
                raise PlayerSpecError(f"player spec {shown!r}: use {KOMI_HELP}")
            signed = points if shifted["sign"] == "+" else -points
            return replace(base, text=f"{base.text}{shifted['sign']}k{_number(points)}", komi_points=signed)
        kind = text.split(":", 1)[0]
        usage = {"gnugo": GNUGO_HELP, "uct": UCT_HELP, "pachi": PACHI_HELP}[kind]
        mixed = _MIXED.fullmatch(text)
        base, percent = (mixed["base"], float(mixed["percent"])) if mixed else (text, None)
        number = base.split(":", 1)[1]
        if not number.isascii() or not number.isdigit():
            raise PlayerSpecError(f"player spec {shown!r}: use {usage}")
        if percent is not None and not 0.0 < percent < 100.0:
            raise PlayerSpecError(f"player spec {shown!r}: the random share P of +rP must be 0 < P < 100")
        suffix = "" if percent is None else f"+r{_number(percent)}"
        if kind == "gnugo":
            if int(number) not in GNUGO_LEVELS:
                raise PlayerSpecError(f"player spec {shown!r}: use {usage}")
            return cls(f"gnugo:{int(number)}{suffix}", "gnugo", level=int(number), random_percent=percent)
        if kind == "pachi":
            if percent is not None or int(number) < PACHI_MIN_PLAYOUTS:
                raise PlayerSpecError(f"player spec {shown!r}: use {usage}")
            return cls(f"pachi:{int(number)}", "pachi", playouts=int(number))
        if int(number) < 1:
            raise PlayerSpecError(f"player spec {shown!r}: use {usage}")
        return cls(f"uct:{int(number)}{suffix}", "uct", playouts=int(number), random_percent=percent)

    @classmethod
    def parse_config(cls, text: object, key: str) -> PlayerSpec:
        """A spec as the run config allows it; the error names the config key."""
        try:
            spec = cls.parse(text) if isinstance(text, str) else None
        except PlayerSpecError:
            spec = None
        if spec is None or spec.kind not in CONFIG_KINDS:
            raise PlayerSpecError(f"config key '{key}' = {text!r} is out of range; allowed: {CONFIG_HELP}")
        return spec

    @property
    def slug(self) -> str:
        """The file-name form (a match's `vs_{slug}.json`, a ladder pair's `{a}_vs_{b}.json`): `:` -> `-`
        (`gnugo:1` -> `gnugo-1`, `uct:64+r10` -> `uct-64+r10`), every run of other characters than letters,
        digits and `.+-` -> `_` (a `gtp:` command line, a model file's path), no `_` at either end."""
        return re.sub(r"[^A-Za-z0-9.+-]+", "_", self.text.replace(":", "-")).strip("_")

    @classmethod
    def from_slug(cls, slug: str) -> PlayerSpec:
        """Inverse of `slug` for the config's forms."""
        return cls.parse(slug.replace("-", ":", 1) if slug.startswith(("gnugo-", "uct-", "pachi-")) else slug)

    def generation_at(self, generation: int | None) -> int | None:
        """The generation whose model this spec names when `generation` is evaluated (None: no model of the
        run: GNU Go, random, uct, a GTP program; or `previous` at generation 0)."""
        if self.kind == "previous":
            return generation - 1 if generation is not None and generation >= 1 else None
        if self.kind == "generation":
            return self.generation
        return None

    def opponent_key(self, generation: int) -> str:
        """Which opponent this is at `generation`: specs naming the same model share a key (`gen3`)."""
        other = self.generation_at(generation)
        if other is None and self.kind == "previous":
            return self.text
        return self.text if other is None else f"gen{other}"

    def rating_name(self, generation: int | None = None) -> str | None:
        """The player's name in results files and ratings (None: `previous` at generation 0)."""
        if self.kind in ("generation", "previous"):
            other = self.generation_at(generation)
            return None if other is None else generation_name(other)
        if self.kind in ("gnugo", "uct", "pachi"):
            return self.text  # normalised by parse: gnugo:1, uct:64, gnugo:1+r10, gnugo:10+k8
        if self.kind == "file":
            if self.generation is not None:
                return generation_name(self.generation)
            base = os.path.basename(self.text.rstrip("/"))
            for suffix in MODEL_SUFFIXES:
                base = base.removesuffix(suffix)
            return f"model:{base}"
        return self.text  # random, gtp:...
