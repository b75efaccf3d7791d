"""The package's shape, checked: layers point one way, torch and Snakemake stay in their layers, no cycles.

The layers of `minigo_core`, bottom to top (docs/ARCHITECTURE.md draws them):

    base -> cluster -> game -> data -> nn -> search -> selfplay -> play -> gtp -> rating -> report -> jobs
    -> pipeline -> (cli, bench)

A module may import its own layer and the layers below it, never one above. Every import counts, also
one inside a function: such an import must say why it is there with a `# lazy: reason` comment on its line
(start-up time measured to need it: torch, matplotlib). The workflow (`Snakefile`, `workflow/`) reaches
the library only through `minigo_core.pipeline` and the run layout (`minigo_core.data.layout`).

Every game is played through `selfplay` or `play` (both on `search`); `rating` (the fixed Elo ladder:
calibration, rating a player, the check) plays through `play`, and `report` only reads a run's files, so no
module of `report` reaches any of the three.

Each package says its one concept in the one line of its `__init__` (and holds nothing else), and none is over
~4,000 lines with its C++ (a sub-package counts apart).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "minigo_core"
LAYERS = ["base", "cluster", "game", "data", "nn", "search", "selfplay", "play", "gtp", "rating", "report",
          "jobs", "pipeline", "top"]  # fmt: skip
TOP = {"minigo_core.cli", "minigo_core.bench"}  # the command dispatcher and the benchmarks
# every game is played through these layers: the search, self-play, players and matches
PLAYS = ("minigo_core.search", "minigo_core.selfplay", "minigo_core.play")
READERS = "minigo_core.report"  # what a person reads about a run, from its files alone: plays no game
TORCH_ALLOWED = ("minigo_core.nn", "minigo_core.bench")  # the benchmarks time torch as their baseline
SNAKEMAKE_ALLOWED = ("minigo_core.pipeline",)
WORKFLOW_ALLOWED = ("minigo_core.pipeline", "minigo_core.data.layout")


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer_of(module: str) -> int:
    if module == "minigo_core":
        return 0  # the package's face: the version string only
    for top in TOP:
        if module == top or module.startswith(top + "."):
            return LAYERS.index("top")
    return LAYERS.index(module.split(".")[1])


def is_within(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


class Import:
    def __init__(self, source: str, target: str, line: int, lazy: bool, text: str):
        self.source, self.target, self.line, self.lazy, self.text = source, target, line, lazy, text

    def __repr__(self) -> str:
        return f"{self.source}:{self.line} imports {self.target}"


def imports_of(path: Path, modules: set[str]) -> list[Import]:
    """Every import statement of a file, resolved to module names (`from pkg import mod` -> `pkg.mod`)."""
    source = module_name(path)
    text = path.read_text()
    lines = text.splitlines()
    tree = ast.parse(text)
    found: list[Import] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                if isinstance(child, ast.Import):
                    names = [a.name for a in child.names]
                elif child.level:  # relative imports are not used in this package
                    names = [f"<relative>.{child.module}"]
                else:
                    base = child.module or ""
                    names = [
                        f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in child.names
                    ]
                for name in dict.fromkeys(names):
                    found.append(Import(source, name, child.lineno, in_function, lines[child.lineno - 1]))
            visit(child, inner)

    visit(tree, False)
    return found


def package_files() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "csrc" not in p.parts)


@pytest.fixture(scope="module")
def graph() -> list[Import]:
    files = package_files()
    modules = {module_name(p) for p in files}
    return [imp for p in files for imp in imports_of(p, modules)]


def own(imp: Import) -> bool:
    return imp.target == "minigo_core" or imp.target.startswith("minigo_core.")


def test_every_module_belongs_to_a_layer():
    for path in package_files():
        name = module_name(path)
        assert layer_of(name) >= 0, f"{path}: not in one of the layers {LAYERS}"


def test_layers_point_one_way(graph):
    upward = [
        f"{imp} ({LAYERS[layer_of(imp.source)]} -> {LAYERS[layer_of(imp.target)]})"
        for imp in graph
        if own(imp) and layer_of(imp.target) > layer_of(imp.source)
    ]
    assert upward == [], "imports that point up the layers:\n" + "\n".join(upward)


def test_only_nn_imports_torch(graph):
    bad = [
        str(i) for i in graph if i.target.split(".")[0] == "torch" and not is_within(i.source, TORCH_ALLOWED)
    ]
    assert bad == [], "torch imported outside minigo_core.nn:\n" + "\n".join(bad)


def test_only_the_pipeline_knows_snakemake(graph):
    bad = [
        str(i)
        for i in graph
        if i.target.split(".")[0] == "snakemake" and not is_within(i.source, SNAKEMAKE_ALLOWED)
    ]
    assert bad == [], "snakemake imported outside minigo_core.pipeline:\n" + "\n".join(bad)


def test_no_import_cycles(graph):
    edges: dict[str, set[str]] = {}
    for imp in graph:
        if own(imp) and imp.target != imp.source and imp.target != "minigo_core":
            edges.setdefault(imp.source, set()).add(imp.target)
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def walk(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                walk(nxt, [*stack, nxt])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            walk(node, [node])
    assert cycles == [], "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_imports_inside_functions_say_why(graph):
    bad = [f"{i}: {i.text.strip()}" for i in graph if i.lazy and "# lazy:" not in i.text]
    assert bad == [], (
        "imports inside functions must be at module top, or carry a '# lazy: reason' comment:\n"
        + "\n".join(bad)
    )


def test_the_workflow_reaches_the_library_only_through_the_pipeline():
    files = [
        REPO / "Snakefile",
        *sorted((REPO / "workflow").rglob("*.smk")),
        *sorted((REPO / "workflow").rglob("*.py")),
    ]
    pattern = re.compile(r"^\s*(?:from|import)\s+(minigo_core[\w.]*)(?:\s+import\s+([\w, ]+))?", re.M)
    bad = []
    for path in files:
        for match in pattern.finditer(path.read_text()):
            module, names = match.group(1), match.group(2) or ""
            names = [n.split(" as ")[0].strip() for n in names.split(",") if n.strip()]
            targets = [f"{module}.{n}" for n in names] or [module]
            bad += [f"{path.relative_to(REPO)}: {t}" for t in targets if not is_within(t, WORKFLOW_ALLOWED)]
    assert bad == [], "the workflow imports library modules other than the pipeline's:\n" + "\n".join(bad)


def own_edges(graph: list[Import]) -> dict[str, set[str]]:
    """module -> the package's modules it imports (every import, also one inside a function)."""
    edges: dict[str, set[str]] = {}
    for imp in graph:
        if own(imp) and imp.target != imp.source and imp.target != "minigo_core":
            edges.setdefault(imp.source, set()).add(imp.target)
    return edges


def paths_into(edges: dict[str, set[str]], sources: list[str], forbidden: tuple[str, ...]) -> list[list[str]]:
    """For each source, the first import chain (breadth first) that reaches a module within `forbidden`."""
    found = []
    for source in sources:
        parent: dict[str, str | None] = {source: None}
        queue = [source]
        while queue:
            node = queue.pop(0)
            if node != source and is_within(node, forbidden):
                chain = [node]
                while parent[chain[-1]] is not None:
                    chain.append(parent[chain[-1]])
                found.append(chain[::-1])
                break
            for nxt in sorted(edges.get(node, ())):
                if nxt not in parent:
                    parent[nxt] = node
                    queue.append(nxt)
    return found


def test_no_module_of_report_plays_a_game(graph):
    """`report/` reads a run's files; a game is played only through `search`, `selfplay` and `play`. So no
    module of `report` imports them, directly or through what it imports (a `rating` module that plays, such
    as the calibration or `ladder rate`)."""
    edges = own_edges(graph)
    readers = [m for m in map(module_name, package_files()) if is_within(m, (READERS,))]
    assert readers, f"no module of {READERS} found"
    bad = paths_into(edges, readers, PLAYS)
    assert bad == [], "modules of report/ that reach the layers that play games:\n" + "\n".join(
        " -> ".join(chain) for chain in bad
    )


def test_the_play_check_finds_a_chain_through_another_layer():
    """The check above fails where it should: report -> rating -> play is found, with its path."""
    edges = {
        "minigo_core.report.a": {"minigo_core.data.x", "minigo_core.rating.b"},
        "minigo_core.rating.b": {"minigo_core.play.match"},
        "minigo_core.report.c": {"minigo_core.rating.ladder"},
    }
    found = paths_into(edges, ["minigo_core.report.a", "minigo_core.report.c"], PLAYS)
    assert found == [["minigo_core.report.a", "minigo_core.rating.b", "minigo_core.play.match"]]


def test_rating_sits_between_play_and_report():
    """The layer order of this test is the one docs/ARCHITECTURE.md draws (top first), `rating` between
    `play` and `report`."""
    assert LAYERS.index("play") < LAYERS.index("rating") == LAYERS.index("report") - 1
    text = (REPO / "docs" / "ARCHITECTURE.md").read_text()
    block = text.split("## The layers", 1)[1].split("```")[1]
    drawn = [line.split()[0] for line in block.splitlines() if line.startswith("   ") and line.split()]
    names = [n for n in drawn if n in LAYERS]
    assert names == LAYERS[::-1], f"docs/ARCHITECTURE.md draws {names}, this test has {LAYERS[::-1]}"
    assert (PACKAGE / "rating" / "__init__.py").is_file()


def test_one_cpu_model():
    """The CPU a measurement ran on is named by one function (`base/machine.py`), not one per module with
    its own fallbacks."""
    roots = [PACKAGE, REPO / "tools"]
    found = [
        f"{p.relative_to(REPO)}:{node.lineno}"
        for root in roots
        if root.exists()
        for p in sorted(root.rglob("*.py"))
        for node in ast.walk(ast.parse(p.read_text()))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "cpu_model"
    ]
    assert len(found) == 1 and found[0].startswith("minigo_core/base/machine.py:"), (
        "functions named cpu_model (one, in base/machine.py):\n" + "\n".join(found)
    )


def test_the_tools_sit_above_the_library():
    """tools/ (the chaos run, compare_runs) may use the whole library; nothing in the library uses them."""
    bad = []
    for path in package_files():
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            names += [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
            tools = [n for n in names if n == "tools" or n.startswith("tools.")]
            bad += [f"{path.relative_to(REPO)}:{node.lineno}: {n}" for n in tools]
    assert bad == [], "the library imports tools/:\n" + "\n".join(bad)


def test_the_extension_sources_sit_with_the_network():
    assert (PACKAGE / "nn" / "dsp" / "csrc" / "kernels.cpp").exists()


MAX_FUNCTION_LINES = 100


def test_functions_fit_in_a_reader_s_head():
    """No function of the package is over 100 lines (docstring and comments included)."""
    long = []
    for path in package_files():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name} ({lines} lines)")
    assert long == [], f"functions over {MAX_FUNCTION_LINES} lines:\n" + "\n".join(long)


MAX_PARAMETERS = 8


def parameter_count(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """A function's parameters: positional and keyword-only, `self`/`cls` not counted, `*args` and `**kwargs`
    one each."""
    args = node.args
    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    return sum(n not in ("self", "cls") for n in names) + (args.vararg is not None) + (args.kwarg is not None)


def test_functions_take_few_parameters():
    """No function or method of the package takes more than 8 parameters: settings that travel together are
    one type (a search's `SearchSettings`, a match's `MatchSettings`, a rating's `RatingRequest`, ...)."""
    many = []
    for path in package_files():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = parameter_count(node)
                if n > MAX_PARAMETERS:
                    many.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name} ({n} parameters)")
    assert many == [], f"functions over {MAX_PARAMETERS} parameters:\n" + "\n".join(many)


def test_the_parameter_count_counts_what_it_says():
    tree = ast.parse("class C:\n    def f(self, a, /, b, *rest, c, **more): pass\ndef g(cls, x=1): pass\n")
    counts = {n.name: parameter_count(n) for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    assert counts == {"f": 5, "g": 1}


MAX_FILE_LINES = 650


def test_files_fit_in_a_reader_s_head():
    """No Python file of the package, the workflow or the tools is over 650 lines: a module over that has
    more than one job."""
    roots = [PACKAGE, REPO / "workflow", REPO / "tools"]
    files = [p for root in roots if root.exists() for p in sorted(root.rglob("*.py"))]
    long = [
        f"{p.relative_to(REPO)} ({n} lines)"
        for p in files
        if (n := len(p.read_text().splitlines())) > MAX_FILE_LINES
    ]
    assert long == [], f"files over {MAX_FILE_LINES} lines:\n" + "\n".join(long)


MAX_COMMAND_MODULE_LINES = 300


def test_command_modules_stay_thin():
    """A `jobs/` module is one `minigo COMMAND`: its arguments, `main` and the printing of its results, over
    the library below it; at most 300 lines, so that logic that grows moves down to its layer."""
    long = [
        f"{p.relative_to(REPO)} ({n} lines)"
        for p in sorted((PACKAGE / "jobs").glob("*.py"))
        if (n := len(p.read_text().splitlines())) > MAX_COMMAND_MODULE_LINES
    ]
    assert long == [], f"jobs/ modules over {MAX_COMMAND_MODULE_LINES} lines:\n" + "\n".join(long)


MAX_PACKAGE_LINES = 4000


def packages() -> list[Path]:
    """Every package (a folder with an `__init__.py`) of minigo_core, sub-packages included."""
    return sorted(p.parent for p in PACKAGE.rglob("__init__.py"))


def own_lines(package: Path) -> int:
    """Lines of a package's Python and C++ sources, its sub-packages' not counted."""
    subs = [p for p in packages() if p != package and package in p.parents]
    files = [
        f
        for f in package.rglob("*")
        if f.suffix in (".py", ".cpp", ".h") and not any(s in f.parents for s in subs)
    ]
    return sum(len(f.read_text().splitlines()) for f in files)


def test_no_package_holds_more_than_one_room_of_code():
    big = [f"{p.relative_to(REPO)}: {n}" for p in packages() if (n := own_lines(p)) > MAX_PACKAGE_LINES]
    assert big == [], (
        f"packages over {MAX_PACKAGE_LINES} lines with their C++ (split by concept):\n" + "\n".join(big)
    )


def test_each_package_says_its_purpose_in_one_line():
    """A package's `__init__.py` is one docstring line: what it holds. Its code lives in named modules."""
    bad = []
    for package in packages():
        if package == PACKAGE:
            continue  # the package's face: its docstring draws the layers, and the version
        lines = (package / "__init__.py").read_text().splitlines()
        if len(lines) != 1 or not (lines[0].startswith('"""') and lines[0].endswith('"""')):
            bad.append(f"{package.relative_to(REPO)}/__init__.py ({len(lines)} lines)")
    assert bad == [], "package __init__ files that are not one line of purpose:\n" + "\n".join(bad)


def test_a_native_library_is_loaded_by_its_own_package():
    """A compiled library is declared (`native.Library("minigo_core.PKG", ...)`) only by a module of PKG's
    layer, so that a layer never loads a higher layer's library by a string name the import graph cannot
    see (`base/native.py`, the loader, names none but in its docstring's example)."""
    pattern = re.compile(r"native\.Library\(\s*\"(minigo_core\.[\w.]+)\"")
    bad = []
    for path in package_files():
        source = module_name(path)
        if source == "minigo_core.base.native":
            continue
        for found in pattern.findall(path.read_text()):
            if layer_of(found) != layer_of(source):
                bad.append(f"{path.relative_to(REPO)}: loads {found}'s library")
    assert bad == [], "native libraries loaded from another package:\n" + "\n".join(bad)


def test_the_go_rules_live_in_game():
    """The C++ board and the replay of a game are `game/csrc`'s; the searcher compiles them in from there."""
    assert (PACKAGE / "game" / "csrc" / "board.cpp").is_file()
    assert (PACKAGE / "game" / "csrc" / "replay.cpp").is_file()
    elsewhere = [
        str(p.relative_to(REPO))
        for p in PACKAGE.rglob("*")
        if p.name in ("board.cpp", "board.h", "replay.cpp") and p.parent != PACKAGE / "game" / "csrc"
    ]
    assert elsewhere == [], f"copies of the Go rules outside game/csrc: {elsewhere}"
