"""The docs point at things that exist: links, repository paths and module names in README.md and docs/*.md.

Checked, in each document:
- markdown links and images `[text](target)` that are not URLs: the target, relative to the document, exists;
  a `#fragment` into a markdown file names one of its headings (GitHub's anchors);
- repository paths inside code (inline code and fenced blocks) that begin with a top-level entry of the
  repository (`minigo_core/`, `workflow/`, `tools/`, `docs/`, ..., `Snakefile`, `config.yaml`, `Makefile`)
  exist; a glob such as `workflow/rules/*.smk` matches at least one file. Paths of a run (`runs/...`,
  `{root}/...`) and templates (`tests/test_<module>.py`) are not repository paths and are not checked;
- dotted module names, in code or prose (`minigo_core.data.layout`, `minigo_core.game.go.Position`), name a
  module or package, and a name after the module appears in its source.

The comment block at the top of the Snakefile is checked the same way. And README.md starts with the two
commands that do all the set-up: `make run` and `make test`; it is for users (at most 200 lines, no commit
hashes: measured figures and their commits live in docs/BENCHMARKS.md, whose every section is dated).

What the docs state about the code is held to it where a test can: the figures of each config in the
README's `## Configs` list are the configs' own (`config.yaml`, and the others merged over it as `minigo run`
merges them); no code comment or docstring holds a date or a CPU name (a measurement, its date and machine
go to docs/BENCHMARKS.md; the comment keeps the reason); every package has unit tests (docs/CONTRACTS.md);
docs/ARCHITECTURE.md's module table is the tree (every module and C++ source of minigo_core in the row of
its package, no file that does not exist); every run path the docs write in inline code
(`games/genGGGG.pack.arrow`) is one `minigo_core/data/layout.py` makes. The command lines of the docs are
checked in test_readme_commands.py.
"""

from __future__ import annotations

import ast
import fnmatch
import inspect
import io
import itertools
import re
import tokenize
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from minigo_core.base.config import RunConfig, load_config

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
TOP_DIRS = ("minigo_core/", "workflow/", "docs/", "profiles/", "config/", "tests/", "tools/")
TOP_FILES = ("Snakefile", "config.yaml", "Makefile", "README.md", "setup.py", "pyproject.toml")
PACKAGE = "minigo_core"

FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
TOKEN_SPLIT = re.compile(r"[\s,;=()\[\]\"'|`]+")
TEMPLATE_CHARS = set("<>{}$")
MODULE = re.compile(rf"(?<![\w./]){PACKAGE}(?:\.\w+)+")


def split_code(text: str) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """(prose lines, code pieces) of a markdown text, each with its line number; code = inline spans and
    the lines of fenced blocks. Prose keeps the line without its code spans."""
    prose: list[tuple[int, str]] = []
    code: list[tuple[int, str]] = []
    fenced = False
    for number, line in enumerate(text.splitlines(), start=1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            code.append((number, line))
            continue
        code += [(number, m.group(2)) for m in CODE_SPAN.finditer(line)]
        prose.append((number, CODE_SPAN.sub(" ", line)))
    return prose, code


def tokens(code: str) -> list[str]:
    """The words of a piece of code that may be paths or module names, without trailing punctuation."""
    found = []
    for raw in TOKEN_SPLIT.split(code):
        token = raw.split("::", 1)[0].split("#", 1)[0].rstrip(".:;")
        if token and not TEMPLATE_CHARS & set(token):
            found.append(token)
    return found


def is_repo_path(token: str) -> bool:
    return token.startswith(TOP_DIRS) or token in TOP_FILES


def path_exists(token: str) -> bool:
    if any(c in token for c in "*?"):
        return any(REPO.glob(token.rstrip("/")))
    return (REPO / token).exists()


def module_exists(dotted: str) -> bool:
    """`a.b.c.name`: the longest run of parts that is a package or module exists; the next part, if any, is
    a submodule, a compiled extension in the package, or a name its source mentions."""
    parts = dotted.split(".")
    path = REPO / parts[0]
    if not path.is_dir():
        return False
    for i, part in enumerate(parts[1:], start=1):
        if (path / part).is_dir():
            path = path / part
            continue
        if (path / f"{part}.py").is_file():
            path = path / f"{part}.py"
            rest = parts[i + 1 :]
            return not rest or bool(re.search(rf"\b{re.escape(rest[0])}\b", path.read_text()))
        init = path / "__init__.py"
        mentioned = init.is_file() and re.search(rf"\b{re.escape(part)}\b", init.read_text())
        return bool(mentioned) or any(path.glob(f"{part}.*"))
    return True


def heading_anchors(markdown: Path) -> set[str]:
    """GitHub's anchors for the headings of a markdown file."""
    lines = markdown.read_text().splitlines()
    prose, _ = split_code(markdown.read_text())
    anchors = set()
    for number, _ in prose:
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", lines[number - 1])
        if m:
            title = m.group(1).strip().lower()
            anchors.add(re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", title)))
    return anchors


def dangling(doc: Path, text: str) -> list[str]:
    """Every reference in `text` (the contents of `doc`) that points at nothing, as `doc:line: reference`."""
    prose, code = split_code(text)
    where = doc.relative_to(REPO)
    bad = []
    for number, line in prose:
        for dotted in MODULE.findall(LINK.sub(" ", line)):
            if not module_exists(dotted):
                bad.append(f"{where}:{number}: module {dotted}")
        for target in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:
                continue
            path_part, _, fragment = target.partition("#")
            resolved = (doc.parent / path_part).resolve() if path_part else doc
            if not resolved.exists():
                bad.append(f"{where}:{number}: link {target} (no such file)")
            elif fragment and resolved.suffix == ".md" and fragment not in heading_anchors(resolved):
                bad.append(f"{where}:{number}: link {target} (no heading #{fragment})")
    for number, piece in code:
        for token in tokens(piece):
            if is_repo_path(token) and not path_exists(token):
                bad.append(f"{where}:{number}: path {token}")
            elif MODULE.fullmatch(token) and not module_exists(token):
                bad.append(f"{where}:{number}: module {token}")
    return bad


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_reference_in_the_docs_exists(doc: Path) -> None:
    bad = dangling(doc, doc.read_text())
    assert bad == [], "references to files or modules that do not exist:\n" + "\n".join(bad)


def test_the_snakefile_header_references_exist() -> None:
    snakefile = REPO / "Snakefile"
    header = []
    for line in snakefile.read_text().splitlines():
        if not line.startswith("#"):
            break
        header.append(line.lstrip("# "))
    # the comment block is code-like prose: every word of it is checked as inline code
    bad = dangling(snakefile, "\n".join(f"`{line}`" if line else "" for line in header))
    assert bad == [], "the Snakefile's comment block names things that do not exist:\n" + "\n".join(bad)


def test_the_run_layout_in_the_architecture_doc_is_the_one_in_layout_py() -> None:
    """docs/ARCHITECTURE.md copies the run layout from the docstring of `minigo_core/data/layout.py`."""
    docstring = (REPO / "minigo_core" / "data" / "layout.py").read_text().split('"""')[1]
    entries = [line.strip() for line in docstring.splitlines() if line.strip().startswith("{root}/")]
    doc = {line.strip() for line in (REPO / "docs" / "ARCHITECTURE.md").read_text().splitlines()}
    assert entries, "minigo_core/data/layout.py's docstring no longer lists the run layout"
    missing = [entry for entry in entries if entry not in doc]
    assert missing == [], "docs/ARCHITECTURE.md's run layout differs from layout.py's:\n" + "\n".join(missing)


def test_readme_starts_with_the_two_setup_commands() -> None:
    head = "\n".join((REPO / "README.md").read_text().splitlines()[:30])
    assert "make run" in head and "make test" in head, "README.md must show `make run` and `make test` first"
    assert head.index("make run") < head.index("make test")


README_MAX_LINES = 200
# A commit hash as the docs write it: 7 to 40 hex digits with at least one digit and one letter (so neither a
# plain number nor a word such as "defaced" counts).
COMMIT_HASH = re.compile(r"(?<![\w/.-])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![\w/.-])")
DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")


def test_readme_is_short_and_for_users() -> None:
    """README.md says how to use the pipeline; figures, commits and investigations go to BENCHMARKS.md."""
    text = (REPO / "README.md").read_text()
    lines = text.splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines (at most {README_MAX_LINES})"
    hashes = [f"README.md:{n}: {h}" for n, line in enumerate(lines, 1) for h in COMMIT_HASH.findall(line)]
    assert hashes == [], "commit hashes belong in docs/BENCHMARKS.md, not the README:\n" + "\n".join(hashes)


def test_every_benchmark_section_is_dated() -> None:
    """Each `## ` section of docs/BENCHMARKS.md (after the introduction) gives the date of its figures."""
    text = (REPO / "docs" / "BENCHMARKS.md").read_text()
    sections = re.split(r"^## ", text, flags=re.M)[1:]
    assert sections, "docs/BENCHMARKS.md has no sections"
    undated = [s.splitlines()[0] for s in sections if not DATE.search(s)]
    assert undated == [], "sections of docs/BENCHMARKS.md without a date (YYYY-MM-DD):\n" + "\n".join(undated)


def test_the_commit_hash_pattern() -> None:
    found = COMMIT_HASH.findall("commit 374ab04, a0f7d1a; 1000000 games; defaced; 0x1f; sha256, ab12cd34ef")
    assert found == ["374ab04", "a0f7d1a", "ab12cd34ef"]


def test_the_checker_catches_what_it_should() -> None:
    """The checks above cannot pass vacuously: each kind of dangling reference is found."""
    text = "\n".join(
        [
            "# Title",
            "[ok](README.md) [gone](docs/nothing_here.md) [anchor](README.md#no-such-heading)",
            "`minigo_core/data/layout.py` `minigo_core/no_such.py` `workflow/rules/*.nope`",
            "`minigo_core.data.layout` `minigo_core.data.no_such_module` `minigo_core.game.go.NoSuchName`",
            "## minigo_core.search.mcts / players, and minigo_core.nowhere in prose.",
            "`runs/local/config.yaml` `{root}/models/` `tests/test_<module>.py` [web](https://example.org)",
            "```",
            "snakemake --profile profiles/nowhere",
            "```",
        ]
    )
    bad = dangling(REPO / "README.md", text)
    found = {b.split(": ", 1)[1] for b in bad}
    assert found == {
        "link docs/nothing_here.md (no such file)",
        "link README.md#no-such-heading (no heading #no-such-heading)",
        "path minigo_core/no_such.py",
        "path workflow/rules/*.nope",
        "module minigo_core.data.no_such_module",
        "module minigo_core.game.go.NoSuchName",
        "module minigo_core.nowhere",
        "path profiles/nowhere",
    }


# The README's "Configs" list states each config's figures in these phrases; the test below reads them back
# and compares them with the config as `minigo run` loads it (the file merged over config.yaml).
ORDINAL = r"(\d+)(?:st|nd|rd|th)"
CONFIG_FACTS: dict[str, tuple[str, Callable[[RunConfig], object]]] = {
    "board": (r"\ba (\d+)x\1 board\b", lambda c: (c.board_size,)),
    "net": (r"\ba (\d+)x(\d+) net\b", lambda c: (c.model.blocks, c.model.filters)),
    "search": (
        r"\b(Gumbel|PUCT) search with (\d+) simulations\b",
        lambda c: (c.selfplay.search, c.selfplay.readouts),
    ),
    "games": (r"\b(\d+) games a generation\b", lambda c: (c.selfplay.games,)),
    "games per job": (r"\bin jobs of (\d+)\b", lambda c: (c.selfplay.games_per_job,)),
    "window": (r"\ba window of (\d+) generations\b", lambda c: (c.window.generations,)),
    "ranks": (r"\b(\d+) training ranks?\b", lambda c: (c.train.ranks,)),
    "replay ratio": (r"\bat ([\d.]+) examples per new position\b", lambda c: (c.train.replay_ratio,)),
    "generations": (r"\bfor (\d+) generations\b", lambda c: (c.generations,)),
    "evaluation": (rf"\bevaluation every (?:{ORDINAL} )?generation\b", lambda c: (c.evaluate.every,)),
    "final matches": (r"\b(\d+)-game final matches\b", lambda c: (c.evaluate.final_games,)),
}
# what each config's entry must state (the README may state more: whatever it states is compared)
CONFIG_ENTRIES = {
    "config.yaml": set(CONFIG_FACTS),
    "config/tiny.yaml": {"board", "net", "games", "games per job", "generations"},
    "config/paper.yaml": {"board", "net", "games", "games per job", "ranks"},
    "config/moonshot.yaml": {"search", "generations", "evaluation"},
}


def readme_config_entries() -> dict[str, str]:
    """The README's `## Configs` list: `- `FILE`: text` items, each joined into one line."""
    text = (REPO / "README.md").read_text()
    section = re.search(r"^## Configs\n(.*?)^## ", text, flags=re.M | re.S)
    assert section, "README.md has no `## Configs` section"
    items = re.split(r"^- ", section.group(1), flags=re.M)[1:]
    entries = {}
    for item in items:
        m = re.match(r"`([^`]+)`:\s*(.*)", " ".join(item.split()), flags=re.S)
        if m:
            entries[m.group(1)] = m.group(2)
    return entries


def merged_config(path: str) -> RunConfig:
    """The config `minigo run --config path` runs: path's keys merged over config.yaml's, nested ones too."""

    def merge(base: dict, over: dict) -> dict:
        for key, value in over.items():
            base[key] = merge(base[key], value) if isinstance(value, dict) and key in base else value
        return base

    data = yaml.safe_load((REPO / "config.yaml").read_text())
    if path != "config.yaml":
        data = merge(data, yaml.safe_load((REPO / path).read_text()))
    return load_config(data)


def stated_figures(text: str) -> dict[str, tuple]:
    """The figures an entry states, by fact; a fact stated twice is an error."""
    found: dict[str, tuple] = {}
    for fact, (pattern, _) in CONFIG_FACTS.items():
        matches = re.findall(pattern, text)
        assert len(matches) <= 1, f"README.md states {fact} twice in one config entry: {text!r}"
        if matches:
            groups = matches[0] if isinstance(matches[0], tuple) else (matches[0],)
            found[fact] = tuple(parse_figure(g) for g in groups)
    return found


def parse_figure(word: str) -> object:
    if word == "":
        return 1  # "evaluation every generation"
    if word in ("Gumbel", "PUCT"):
        return word.lower()
    return float(word) if "." in word else int(word)


@pytest.mark.parametrize("path", sorted(CONFIG_ENTRIES))
def test_the_readme_config_figures_are_the_configs(path: str) -> None:
    entries = readme_config_entries()
    assert path in entries, f"README.md's `## Configs` list has no entry for `{path}`"
    stated = stated_figures(entries[path])
    missing = CONFIG_ENTRIES[path] - set(stated)
    assert not missing, f"README.md's entry for {path} no longer states {sorted(missing)} (phrases above)"
    cfg = merged_config(path)
    wrong = {
        fact: (figures, CONFIG_FACTS[fact][1](cfg))
        for fact, figures in stated.items()
        if figures != CONFIG_FACTS[fact][1](cfg)
    }
    assert not wrong, f"README.md's figures for {path} differ from the file's (README, file): {wrong}"


def test_the_config_figures_check_can_fail() -> None:
    text = "a 9x9 board, a 4x32 net, 1344 games a generation in jobs of 224, evaluation every 4th generation"
    stated = stated_figures(text)
    cfg = merged_config("config.yaml")
    assert stated["board"] == CONFIG_FACTS["board"][1](cfg)
    assert stated["games"] == (1344,) != CONFIG_FACTS["games"][1](cfg)
    assert stated["evaluation"] == (4,) != CONFIG_FACTS["evaluation"][1](cfg)
    assert stated_figures("evaluation every generation")["evaluation"] == (1,)


# Measurements, their dates and machines belong in docs/BENCHMARKS.md: a code comment keeps the reason.
CODE_DIRS = ("minigo_core", "tools", "workflow", "tests")
CPU_NAME = re.compile(
    r"\b(?:Zen ?\d|EPYC|Xeon|Cascade Lake|Ice Lake|Sapphire Rapids)\b|\breference machine\b"
)
C_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def code_comments(path: Path) -> list[tuple[int, str]]:
    """(line, text) of each comment of a source file: Python comments and docstrings, C/C++ comments,
    Snakemake `#` comments."""
    text = path.read_text()
    if path.suffix == ".py":
        found = [
            (tok.start[0], tok.string)
            for tok in tokenize.generate_tokens(io.StringIO(text).readline)
            if tok.type == tokenize.COMMENT
        ]
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node, clean=False)
                if doc:
                    found.append((node.body[0].lineno, doc))
        return found
    if path.suffix in (".h", ".hpp", ".c", ".cc", ".cpp"):
        return [(text.count("\n", 0, m.start()) + 1, m.group()) for m in C_COMMENT.finditer(text)]
    return [(n, line[line.index("#") :]) for n, line in enumerate(text.splitlines(), 1) if "#" in line]


def dated_comments(paths: list[Path], root: Path = REPO) -> list[str]:
    """`file:line: match in comment` for each date or CPU name in the comments of `paths`."""
    bad = []
    for path in paths:
        for line, comment in code_comments(path):
            for m in (*DATE.finditer(comment), *CPU_NAME.finditer(comment)):
                bad.append(f"{path.relative_to(root)}:{line}: {m.group()!r} in {comment.strip()[:80]!r}")
    return bad


def source_files() -> list[Path]:
    suffixes = {".py", ".h", ".hpp", ".c", ".cc", ".cpp", ".smk"}
    files = [p for d in CODE_DIRS for p in (REPO / d).rglob("*") if p.suffix in suffixes and p.is_file()]
    return sorted([*files, REPO / "Snakefile"])


def test_no_code_comment_holds_a_date_or_a_machine() -> None:
    """Comments say why; what was measured, when and on which CPU goes to docs/BENCHMARKS.md."""
    bad = dated_comments(source_files())
    assert bad == [], (
        "dates or CPU names in code comments (move the figure to docs/BENCHMARKS.md):\n" + "\n".join(bad)
    )


def test_the_comment_check_can_fail(tmp_path: Path) -> None:
    py = tmp_path / "m.py"
    py.write_text('"""Doc (2026-11-27)."""\nX = "2026-01-01"  # on a Zen 5\nY = 1  # plain\n')
    cpp = tmp_path / "k.cpp"
    cpp.write_text("int x;  // the EPYC's cache\n/* measured on the reference machine */\nint y;\n")
    found = {re.match(r"(\S+):(\d+): '([^']*)'", c).groups() for c in dated_comments([py, cpp], tmp_path)}
    assert found == {
        ("m.py", "1", "2026-11-27"),
        ("m.py", "2", "Zen 5"),
        ("k.cpp", "1", "EPYC"),
        ("k.cpp", "2", "reference machine"),
    }


def imported_packages(test_file: Path) -> set[str]:
    """The packages of minigo_core (`base`, `search`, ...) a test file imports from."""
    found = set()
    for node in ast.walk(ast.parse(test_file.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] if node.module != PACKAGE else [f"{PACKAGE}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found |= {name.split(".")[1] for name in names if name.startswith(f"{PACKAGE}.")}
    return found


def test_every_package_has_unit_tests() -> None:
    """docs/CONTRACTS.md: a contract is checked by the unit tests of its concept, and every package of
    minigo_core has some: a test file under tests/unit/ imports from it."""
    packages = {p.parent.name for p in (REPO / PACKAGE).glob("*/__init__.py")}
    tested = set().union(*(imported_packages(f) for f in (REPO / "tests" / "unit").glob("test_*.py")))
    assert packages, "no packages found under minigo_core/"
    assert packages - tested == set(), (
        f"packages of minigo_core no unit test imports: {sorted(packages - tested)}"
    )


# docs/ARCHITECTURE.md's module table: one row per package of minigo_core (`| `minigo_core/PKG/` | role |
# modules |`), naming every module and C++ source of the package by its file name.
SOURCE_SUFFIXES = (".py", ".cpp", ".h")
FILE_NAME = re.compile(r"(?<![\w./-])([\w./-]*\w\.(?:py|cpp|h))(?![\w.])")


def module_table(text: str) -> dict[str, str]:
    """The rows of the table under `## The layers` whose first cell names a folder of minigo_core: {folder
    relative to the repository: the rest of the row}."""
    section = text.split("## The layers", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        m = re.match(rf"^\|\s*`({PACKAGE}/(?:[\w/]+/)?)`\s*\|(.*)\|\s*$", line)
        if m:
            assert m.group(1) not in rows, f"docs/ARCHITECTURE.md: two rows for {m.group(1)}"
            rows[m.group(1)] = m.group(2)
    return rows


def package_sources(folder: Path) -> set[str]:
    """The file names a package's row must name: its modules (not `__init__.py`) and its `csrc/` sources."""
    names = {p.name for p in folder.glob("*.py") if p.name != "__init__.py"}
    return names | {p.name for p in (folder / "csrc").glob("*") if p.suffix in SOURCE_SUFFIXES}


def table_problems(rows: dict[str, str], root: Path = REPO) -> list[str]:
    """Packages without a row, sources their row does not name, and file names of a row that name nothing
    (a name resolves in the row's package or its `csrc/`, or, with a folder, in minigo_core)."""
    bad = []
    folders = sorted({p.parent for p in (root / PACKAGE).rglob("__init__.py")})
    for folder in folders:
        key = f"{folder.relative_to(root)}/"
        if key not in rows:
            bad.append(f"no row for {key}")
            continue
        named = {Path(name).name for name in FILE_NAME.findall(rows[key])}
        bad += [f"{key}: {name} not in its row" for name in sorted(package_sources(folder) - named)]
    for key, row in rows.items():
        folder = root / key
        for name in FILE_NAME.findall(row):
            places = [folder / name, folder / "csrc" / name, root / PACKAGE / name]
            if not any(p.is_file() for p in places):
                bad.append(f"{key}: {name} does not exist")
    return bad


def test_the_module_table_is_the_tree() -> None:
    """Every module and C++ source of minigo_core is in docs/ARCHITECTURE.md's table, in its package's row,
    and the table names no file that does not exist."""
    rows = module_table((REPO / "docs" / "ARCHITECTURE.md").read_text())
    bad = table_problems(rows)
    assert bad == [], "docs/ARCHITECTURE.md's module table differs from the tree:\n" + "\n".join(bad)


def test_the_module_table_check_can_fail(tmp_path: Path) -> None:
    for path in ("a/one.py", "a/csrc/k.cpp", "a/csrc/k.h", "a/b/two.py", "c/three.py"):
        (tmp_path / PACKAGE / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / PACKAGE / path).write_text("")
    for package in ("", "a/", "a/b/", "c/"):
        (tmp_path / PACKAGE / package / "__init__.py").write_text("")
    text = "\n".join(
        [
            "## The layers",
            "| package | role | modules |",
            f"| `{PACKAGE}/` | top | nothing |",
            f"| `{PACKAGE}/a/` | a | `one.py` (see `c/three.py`), `csrc/k.cpp`, `gone.py` |",
            f"| `{PACKAGE}/a/b/` | b | `two.py`, `k.h` |",
            "## Next",
        ]
    )
    assert sorted(table_problems(module_table(text), tmp_path)) == [
        f"{PACKAGE}/a/: gone.py does not exist",
        f"{PACKAGE}/a/: k.h not in its row",
        f"{PACKAGE}/a/b/: k.h does not exist",
        f"no row for {PACKAGE}/c/",
    ]


# A run's paths as the docs write them in inline code (`{root}/games/genGGGG.pack.arrow`,
# `runs/local/eval/genGGGG/vs_OPPONENT.json`, `train/genGGGG/checkpoint.pt`) are paths `data/layout.py` makes.
RUN_FOLDERS = ("models", "games", "window", "train", "eval", "summary", "tensorboard", "logs")
RUN_PREFIX = re.compile(r"^(?:\{root\}|ROOT|runs/\w+)/")


def layout_paths() -> set[str]:
    """The shapes (digits as `#`) of every path and folder the run layout's functions make, relative to
    the root."""
    from minigo_core.data import layout

    values: dict[str, tuple] = {
        "generation": (7,),
        "game": (42,),
        "job": (2,),
        "rank": (3,),
        "part": (1,),
        "opponent_slug": ("gnugo-1",),
        "kind": ("train", "selfplay", "ladder", "ladder_first", layout.tensorboard_eval_kind("gnugo-1")),
        "name": (*layout.SUMMARY_FILES, layout.REPORT_FILE),
        "step": ("window", "train", "bootstrap", "games_complete", "pack"),
        "command": ("ratings", "plots"),
        "stamp": ("20260101-120000",),
        "invocation": (1,),
    }
    made = {layout.join(layout.train_dir("R", 7), layout.CHECKPOINT)}
    for function in vars(layout).values():
        if not callable(function) or getattr(function, "__module__", "") != layout.__name__:
            continue
        params = list(inspect.signature(function).parameters.values())
        if not params or params[0].name != "root":
            continue
        named = [p for p in params[1:] if p.kind is p.POSITIONAL_OR_KEYWORD and p.default is p.empty]
        for args in itertools.product(*(values[p.name] for p in named)):
            path = function("R", *args)
            if isinstance(path, str):  # not `calibrated_sizes`
                made.add(path)
    shapes = set()
    for path in made:
        parts = Path(path).relative_to("R").parts
        shapes |= {re.sub(r"\d+", "#", "/".join(parts[:n])) for n in range(1, len(parts) + 1)}
    return shapes


def run_path_shape(token: str) -> str | None:
    """The shape of a run path the docs write (placeholders such as GGGG and digits as `#`, other capitals
    such as SLUG as `*`), or None for a token that is not one."""
    prefixed = RUN_PREFIX.match(token)
    rest = token[prefixed.end() :] if prefixed else token
    if re.fullmatch(r"gen(?:[A-Z]+|\d+)\.[\w.]+", rest):
        rest = "*/" + rest  # a generation's file named without its folder: `genGGGG.pack.arrow`
    elif not rest.startswith(tuple(f"{folder}/" for folder in RUN_FOLDERS)) or TEMPLATE_CHARS & set(rest):
        return None
    if not prefixed and "gen" not in rest:
        return None  # `train/`, `eval/vs_SLUG/`: a TensorBoard folder, not a path from the root
    shape = re.sub(r"(gen|game|job|shard)(?:[A-Z]+|\d+)", r"\1#", rest.rstrip("/"))
    return re.sub(r"[A-Z][A-Z_]+", "*", re.sub(r"\d+", "#", shape))


def unknown_run_paths(doc: Path, text: str, shapes: set[str]) -> list[str]:
    bad = []
    lines = text.splitlines()
    for number, _ in split_code(text)[0]:
        for m in CODE_SPAN.finditer(lines[number - 1]):
            token = m.group(2).strip()
            shape = None if " " in token else run_path_shape(token)
            if shape and not any(fnmatch.fnmatchcase(s, shape) for s in shapes):
                bad.append(f"{doc.name}:{number}: {token}")
    return bad


def test_the_run_paths_the_docs_name_are_the_layout_s() -> None:
    """A run path in the docs (CONTRACTS' file names, the README's results table) is one layout.py makes:
    `games/genGGGG.pack.arrow`, not `genGGGG.pack`."""
    shapes = layout_paths()
    bad = [b for doc in DOCS for b in unknown_run_paths(doc, doc.read_text(), shapes)]
    assert bad == [], "run paths in the docs that data/layout.py does not make:\n" + "\n".join(bad)


def test_the_run_path_check_can_fail() -> None:
    text = (
        "`{root}/games/genGGGG.pack.arrow` `games/genGGGG.pack` `runs/local/eval/genGGGG/vs_OPPONENT.json` "
        "`train/genGGGG/checkpoint.pt` `train/genGGGG/model.pt` `{root}/logs/RULE/` `eval/vs_SLUG/` "
        "`{root}/games/gen*/shard000.arrow` `{root}/eval/gen*/vs_*.json` `genGGGG.pack` "
        "`gen0007.complete.json`"
    )
    bad = unknown_run_paths(REPO / "README.md", text, layout_paths())
    assert [b.split(": ", 1)[1] for b in bad] == [
        "games/genGGGG.pack",
        "train/genGGGG/model.pt",
        "{root}/games/gen*/shard000.arrow",
        "genGGGG.pack",
    ]
