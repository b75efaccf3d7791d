"""Every command line the docs write parses: what a reader pastes does not stop at its arguments.

The command lines are the lines of the fenced code blocks of README.md and docs/*.md that start with
`minigo`, `python -m`, `make` or `snakemake` (a path to the program, such as `.venv/bin/minigo`, and leading
`VAR=value` settings allowed; a line ending in `\\` goes on on the next), and the inline code of README.md
that is a command: `minigo COMMAND ARG...`, or `COMMAND SUBCOMMAND ... --option ...` where the README has
just named `minigo COMMAND` (`ladder rate MODEL --board-size 9`). A usage line (with `[`, `|` or `...`) and an
inline mention of a command alone (`minigo status`) are not command lines. In inline code, a word in capitals
(`FILE`, `ROOT`, `N`) is a placeholder: it stands for a value (1, or a name).

Each is checked without running it:
- `minigo COMMAND ARGS`: the command exists under its current name (not an old alias) and its argument
  parser accepts ARGS (the command's `cli_main` is called with argparse stopped right after the parse);
- `python -m minigo_core.bench NAME ARGS`, `python -m tools.X ARGS`: the module exists and, if it parses its
  arguments with argparse, accepts ARGS;
- `make TARGET VAR=value`: the Makefile has the target and uses the variable;
- `snakemake ARGS`: Snakemake's own argument parser accepts ARGS.

And every `--option` the docs name for a `minigo` command, in usage lines and prose too, is one of its own.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import io
import re
import shlex
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from minigo_core import cli

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
DOCS = [README, *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
PROGRAMS = ("minigo", "python", "python3", "make", "snakemake")
USAGE_SYNTAX = ("[", "|", "...", "{", "<")
PLACEHOLDER = re.compile(r"^[A-Z][A-Z0-9_]*$")
ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*=")


def fenced_command_lines(text: str) -> list[tuple[int, str]]:
    """(line number, command line) of each fenced line that runs one of PROGRAMS."""
    found = []
    fenced = False
    pending: tuple[int, str] | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            continue
        if pending:  # the shell drops a backslash and the newline after it, nothing else
            number, line = pending[0], pending[1] + line
        if line.rstrip().endswith("\\"):
            pending = (number, line.rstrip()[:-1])
            continue
        pending = None
        stripped = line.strip()
        words = stripped.split()
        while words and ASSIGNMENT.match(words[0]):
            words = words[1:]
        if words and Path(words[0]).name in PROGRAMS:
            found.append((number, stripped))
    return found


def inline_command_lines(text: str) -> list[tuple[int, str]]:
    """(line number, command line) of each inline code span of a README outside fences that is a command."""
    prose = "\n".join("" if fenced else line for line, fenced in _fenced_flags(text))
    found = []
    for m in CODE_SPAN.finditer(prose):
        words = m.group(2).split()
        if len(words) > 2 and words[0] in cli.COMMANDS and not words[1].startswith("-"):
            if any(w.startswith("--") for w in words):  # `ladder rate MODEL --board-size 9`
                words = ["minigo", *words]
        if len(words) < 3 or words[0] != "minigo":
            continue  # a command named alone
        found.append((prose.count("\n", 0, m.start()) + 1, " ".join(words)))
    return found


def _fenced_flags(text: str) -> Iterator[tuple[str, bool]]:
    fenced = False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            yield "", True
        else:
            yield line, fenced


def placeholders_filled(words: list[str]) -> list[str]:
    """A placeholder (`N`, `FILE`) as a value: a number for a one-letter one (`--move K`), else a name."""
    return [("1" if len(w) == 1 else w.lower()) if PLACEHOLDER.match(w) else w for w in words]


PARSERS: list[argparse.ArgumentParser] = []  # the outermost parser of each command parse_only stopped


class _Parsed(Exception):
    """Raised in place of returning from the outermost `parse_args`: the arguments parsed."""


@contextlib.contextmanager
def parse_only() -> Iterator[None]:
    """argparse stops right after the outermost parse of a command (a parser's sub-parsers parse inside it):
    the command's code after its parse never runs."""
    originals = {name: getattr(argparse.ArgumentParser, name) for name in ("parse_args", "parse_known_args")}
    depth = 0

    def stopping(original: Callable) -> Callable:
        def method(self: argparse.ArgumentParser, *args: object, **kwargs: object) -> object:
            nonlocal depth
            if depth == 0:
                PARSERS.append(self)
            depth += 1
            try:
                result = original(self, *args, **kwargs)
            finally:
                depth -= 1
            if depth == 0:
                raise _Parsed()
            return result

        return method

    try:
        for name, original in originals.items():
            setattr(argparse.ArgumentParser, name, stopping(original))
        yield
    finally:
        for name, original in originals.items():
            setattr(argparse.ArgumentParser, name, original)


def parse_problem(entry: Callable[[list[str]], object], argv: list[str]) -> str | None:
    """None if `entry(argv)` gets through its argument parser, else argparse's message."""
    stderr = io.StringIO()
    try:
        with parse_only(), contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            entry(argv)
    except _Parsed:
        return None
    except SystemExit as exc:
        if exc.code in (0, None):
            return None  # --help
        return f"exits {exc.code}: {stderr.getvalue().strip().splitlines()[-1:]}"
    return "returned without parsing its arguments"


def check_minigo(argv: list[str]) -> str | None:
    if not argv:
        return "no command"
    name, rest = argv[0], argv[1:]
    if name in ("-h", "--help"):
        return None
    if name in cli.ALIASES:
        return f"`minigo {name}` is the old name of `minigo {cli.ALIASES[name]}`"
    if name not in cli.COMMANDS:
        return f"no command {name!r}"
    module = importlib.import_module(cli.COMMANDS[name][0])
    return parse_problem(module.cli_main, rest)


def check_python_module(argv: list[str]) -> str | None:
    if len(argv) < 2 or argv[0] != "-m":
        return None  # a script: its path is checked by test_docs.py
    module_name, rest = argv[1], argv[2:]
    if module_name == "minigo_core.bench" and rest and not rest[0].startswith("-"):
        from minigo_core.bench.__main__ import available  # lazy: the benchmarks' names only

        if rest[0] not in available():
            return f"no benchmark {rest[0]!r}"
        module_name, rest = f"minigo_core.bench.{rest[0]}", rest[1:]
    spec = importlib.util.find_spec(module_name)
    if spec is None:
        return f"no module {module_name}"
    if spec.submodule_search_locations:  # a package runs its __main__
        module_name += ".__main__"
        spec = importlib.util.find_spec(module_name)
    if spec is None or spec.origin is None or "ArgumentParser" not in Path(spec.origin).read_text():
        return None  # no argparse: the module's existence is what can be checked
    module = importlib.import_module(module_name)
    entry = getattr(module, "parse_args", None) or module.main
    return parse_problem(entry, rest)


def makefile_targets() -> set[str]:
    targets = set()
    for line in (REPO / "Makefile").read_text().splitlines():
        m = re.match(r"^([\w.-]+(?:\s+[\w.-]+)*)\s*:(?!=)", line)
        if m:
            targets.update(m.group(1).split())
    return targets


def check_make(argv: list[str]) -> str | None:
    makefile = (REPO / "Makefile").read_text()
    for word in argv:
        if "=" in word:
            variable = word.split("=", 1)[0]
            if not re.search(rf"\$\({re.escape(variable)}\)", makefile):
                return f"the Makefile does not use {variable}"
        elif word not in makefile_targets():
            return f"no make target {word!r}"
    return None


def check_snakemake(argv: list[str]) -> str | None:
    from snakemake.cli import get_argument_parser  # lazy: Snakemake's start-up, for this check only

    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            get_argument_parser().parse_args(argv)
    except SystemExit as exc:
        if exc.code not in (0, None):
            return f"exits {exc.code}: {stderr.getvalue().strip().splitlines()[-1:]}"
    return None


CHECKS: dict[str, Callable[[list[str]], str | None]] = {
    "minigo": check_minigo,
    "python": check_python_module,
    "python3": check_python_module,
    "make": check_make,
    "snakemake": check_snakemake,
}


def command_problem(line: str, inline: bool = False) -> str | None:
    """What is wrong with one command line as a shell would split it, or None."""
    words = shlex.split(line, comments=True)
    while words and ASSIGNMENT.match(words[0]):
        words = words[1:]
    if inline:
        words = placeholders_filled(words)
    return CHECKS[Path(words[0]).name](words[1:])


def is_usage(line: str) -> bool:
    return any(s in line.split("#", 1)[0] for s in USAGE_SYNTAX)


def command_lines() -> list[tuple[str, str, bool]]:
    """(where, command line, inline) of every command line the docs write."""
    lines = []
    for doc in DOCS:
        text = doc.read_text()
        where = doc.relative_to(REPO)
        found = [(n, line, False) for n, line in fenced_command_lines(text)]
        if doc == README:
            found += [(n, line, True) for n, line in inline_command_lines(text)]
        lines += [(f"{where}:{n}", line, inline) for n, line, inline in found if not is_usage(line)]
    return lines


COMMAND_LINES = command_lines()


@pytest.mark.parametrize("where,line,inline", COMMAND_LINES, ids=[w for w, _, _ in COMMAND_LINES])
def test_every_command_line_of_the_docs_parses(where: str, line: str, inline: bool) -> None:
    problem = command_problem(line, inline)
    assert problem is None, f"{where}: `{line}`: {problem}"


def test_the_readme_writes_commands() -> None:
    found = [line for where, line, _ in COMMAND_LINES if where.startswith("README.md")]
    assert any(line.startswith("make run") for line in found)
    assert any(line.startswith("minigo ladder") for line in found)
    assert any(line.startswith("snakemake") for line in found)


def test_the_command_check_can_fail() -> None:
    """Each kind of wrong command line is caught; right ones pass."""
    wrong = {
        "minigo ladder check --rating FILE RUNG": "exits 2",  # --board-size and --seed are required
        "minigo ladder check --board-size N --rating FILE RUNG": "exits 2",  # --seed
        "minigo inspect GAME --move many": "exits 2",
        "minigo plan --config config.yaml": "old name",
        "minigo nosuch --x 1": "no command",
        "python -m minigo_core.bench nosuch": "no benchmark",
        "python -m minigo_core.bench selfplay --no-such-option": "exits 2",
        "python -m tools.nosuch": "no module",
        "python -m tools.chaos --kills 3": "exits 2",  # --workdir is required
        "make nosuch-target": "no make target",
        "make run NOSUCH=1": "does not use",
        "snakemake --no-such-option": "exits 2",
    }
    for line, expected in wrong.items():
        problem = command_problem(line, inline=True)
        assert problem is not None and expected in problem, (line, problem)
    right = [
        "minigo ladder check --board-size N --rating FILE RUNG --seed S",
        "minigo inspect GAME --move K",
        "minigo --help",
        "python -m minigo_core.bench selfplay --ks 1,16",
        "python -m tools.chaos --workdir /tmp/w --kills 3",
        "python -m tools.compare_runs A B",
        "CI=true make run CONFIG=config/tiny.yaml",
        "snakemake --profile profiles/local --forcerun evaluate",
    ]
    for line in right:
        assert command_problem(line, inline=True) is None, line


def test_the_extraction() -> None:
    text = "\n".join(
        [
            "Run `minigo ladder rate MODEL --board-size 9` or `ladder check --board-size 9 A B --seed 1`;",
            "`minigo status` alone is a mention, `selfplay.games` a key, `minigo evaluate --config",
            "C --generation 8` spans two lines.",
            "```",
            "minigo status runs/local     # a comment",
            "python -m tools.chaos --workdir /tmp/c \\",
            "    --kills 2",
            "CI=true make run",
            "git clone REPO",
            "```",
        ]
    )
    assert inline_command_lines(text) == [
        (1, "minigo ladder rate MODEL --board-size 9"),
        (1, "minigo ladder check --board-size 9 A B --seed 1"),
        (2, "minigo evaluate --config C --generation 8"),
    ]
    assert fenced_command_lines(text) == [
        (5, "minigo status runs/local     # a comment"),
        (6, "python -m tools.chaos --workdir /tmp/c     --kills 2"),
        (8, "CI=true make run"),
    ]
    assert is_usage("minigo status ROOT [--json]") and not is_usage("minigo status ROOT  # [x]")


# The options a doc names for a `minigo` command, in a usage line (`minigo window --config C [--dry-run]`) or
# in prose (`minigo gtp --move-time`), are options of that command (or of its subcommand: `ladder rate`).
OPTION = re.compile(r"(?<![\w-])--(?:\[no-\])?[a-z][\w-]*")


def command_options(name: str, sub: str | None) -> set[str] | None:
    """The options of `minigo NAME [SUB]` (None for no such command)."""
    if name not in cli.COMMANDS:
        return None
    module = importlib.import_module(cli.COMMANDS[name][0])
    PARSERS.clear()
    parse_problem(module.cli_main, [])
    parser = PARSERS[0]
    options = {o for action in parser._actions for o in action.option_strings}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and sub in action.choices:
            options |= {o for a in action.choices[sub]._actions for o in a.option_strings}
    return options


def unknown_options(text: str) -> list[str]:
    """`minigo NAME --option` pairs of a doc's code (inline and fenced) whose option NAME does not have."""
    prose = [line for line, fenced in _fenced_flags(text) if not fenced]
    pieces = [m.group(2) for m in CODE_SPAN.finditer("\n".join(prose))]
    pieces += [line for _, line in fenced_command_lines(text)]
    bad = []
    for piece in pieces:
        words = piece.split("#", 1)[0].split()
        if len(words) < 2 or words[0] != "minigo":
            continue
        options = command_options(words[1], words[2] if len(words) > 2 else None)
        for found in OPTION.findall(piece.split("#", 1)[0]):
            for option in {found.replace("[no-]", ""), found.replace("[no-]", "no-")}:
                if options is not None and option not in options:
                    bad.append(f"minigo {words[1]} {option}")
    return bad


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_the_options_the_docs_name_exist(doc: Path) -> None:
    bad = unknown_options(doc.read_text())
    assert bad == [], f"{doc.relative_to(REPO)} names options its commands do not have:\n" + "\n".join(bad)


def test_the_option_check_can_fail() -> None:
    text = "`minigo gtp --model M [--move-time MS] [--no-such]`, `minigo ladder rate X --without R --games 3`"
    assert unknown_options(text) == ["minigo gtp --no-such", "minigo ladder --games"]
    assert unknown_options("`minigo evaluate --config C [--[no-]early-stop]`") == []
