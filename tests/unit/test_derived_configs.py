"""Configs that cannot drift: every file under config/ and every ablation base states every key, so a change
to config.yaml changes none of them; config/paper.yaml holds the paper's and MLPerf's values (compared with
the paper's text when ../shared is beside the checkout); the ablation specs name their frozen base, and the
rows their command runs are the rows of their committed tables in docs/BENCHMARKS.md."""

from __future__ import annotations

import re
import subprocess
import unicodedata
from pathlib import Path

import pytest
import yaml

from minigo_core.base.config import RunConfig, from_dict, unstated_keys
from minigo_core.bench.ablation import driver as ablation
from minigo_core.game.features import num_planes
from minigo_core.pipeline import runner

REPO = Path(__file__).resolve().parents[2]
DERIVED = sorted((REPO / "config").glob("*.yaml"))  # each merged over config.yaml by `minigo run`
BASES = sorted((REPO / "config" / "ablation").glob("base-*.yaml"))
SHARED = REPO.parent / "shared"  # the project's source documents, beside a working checkout (not in CI)
# spec -> (its table's section in docs/BENCHMARKS.md, the commit whose config.yaml its rows ran)
TABLES = {
    "hour.yaml": ("## The hour's ablation on the fixed scale", "e54ad3a"),
    "rows.yaml": ("## The ablation at equal wall time", "df231f9"),
}


def _name(path: Path) -> str:
    return str(path.relative_to(REPO))


def _flat(data: dict, prefix: str = "") -> dict:
    out = {}
    for key, value in data.items():
        out.update(_flat(value, f"{prefix}{key}.") if isinstance(value, dict) else {prefix + key: value})
    return out


def _changed(value: object) -> object:
    """Another value of the same kind, for every leaf (valid or not: none may reach a derived config)."""
    if isinstance(value, dict):
        return {key: _changed(v) for key, v in value.items()}
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, list):
        return [*value, value[-1]] if value else ["random"]
    return 3 if value is None else f"{value}-changed"


def _changed_config_yaml(folder: Path) -> Path:
    """A copy of config.yaml with every value changed, as the Snakefile's config.yaml of `folder`."""
    (folder / "config.yaml").write_text(
        yaml.safe_dump(_changed(yaml.safe_load((REPO / "config.yaml").read_text())))
    )
    return folder


@pytest.mark.parametrize("path", [*DERIVED, *BASES], ids=_name)
def test_every_config_states_every_key(path):
    missing = unstated_keys(yaml.safe_load(path.read_text()))
    assert not missing, (
        f"{_name(path)} does not state {', '.join(missing)}: it takes them from config.yaml and changes when "
        "config.yaml does; state each with the value this config means"
    )


@pytest.mark.parametrize("path", DERIVED, ids=_name)
def test_a_change_to_config_yaml_changes_no_derived_config(path, tmp_path, monkeypatch):
    before, _ = runner.effective_config(str(path))  # the merge `minigo run` and the Snakefile make
    monkeypatch.setattr(runner, "PROJECT", _changed_config_yaml(tmp_path))
    after, _ = runner.effective_config(str(path))
    assert after == before, f"{_name(path)} changed with config.yaml"


def test_a_config_that_leaves_a_key_out_is_caught(tmp_path, monkeypatch):
    data = yaml.safe_load((REPO / "config" / "tiny.yaml").read_text())
    del data["evaluate"]["every"], data["model"]["aux_heads"]
    assert unstated_keys(data) == ["model.aux_heads", "evaluate.every"]
    partial = tmp_path / "partial.yaml"
    partial.write_text(yaml.safe_dump(data))
    before, _ = runner.effective_config(str(partial))
    monkeypatch.setattr(runner, "PROJECT", _changed_config_yaml(tmp_path))
    after, _ = runner.effective_config(str(partial))
    assert (after.evaluate.every, after.model.aux_heads) != (before.evaluate.every, before.model.aux_heads)
    assert unstated_keys(RunConfig().to_dict()) == [] and len(unstated_keys({})) == len(
        _flat(RunConfig().to_dict())
    )


# ---- config/paper.yaml against the paper (../shared/seeds/000_*.txt), MLPerf (../shared/design/ANCHORS.md)


def _shared_text(pattern: str) -> str:
    found = sorted(SHARED.glob(pattern)) if SHARED.is_dir() else []
    if not found:
        pytest.skip(
            f"{SHARED / pattern} is not beside this checkout (a fresh clone): nothing to compare with"
        )
    return unicodedata.normalize("NFKC", found[0].read_text())  # the paper's digits are full-width


def _find(pattern: str, text: str, source: str) -> tuple[str, ...]:
    m = re.search(pattern, text, flags=re.S)
    assert m, (
        f"{source} no longer says /{pattern}/: read it again and update the pattern or config/paper.yaml"
    )
    return m.groups()


def test_paper_yaml_holds_the_papers_values():
    text = _shared_text("seeds/000_*.txt")
    flat = re.sub(r"\s+", "", text)  # the text is broken across lines and spaced at random
    cfg = from_dict(yaml.safe_load((REPO / "config" / "paper.yaml").read_text()))
    (games,) = _find(r"每一次模型迭代对弈(\d+)局", flat, "the paper (section 3)")
    (ranks,) = _find(r"Ntrain=(\d+)", flat, "the paper (section 3)")
    (batch,) = _find(r"batchsize取(\d+)", flat, "the paper (section 3)")
    (total,) = _find(r"总的batchsize都为(\d+)", flat, "the paper (section 3.1.1)")
    (window,) = _find(r"从当前模型前(\d+)个模型", flat, "the paper (section 1.1)")
    loops = re.findall(r"fori=1\W(\d+)do", flat)  # Algorithm 1: train and play N models, then rate every one
    planes, board, board2, batch2 = _find(r"(\d+)×(\d+)×(\d+)×(\d+)的FP32", flat, "the paper (Table 3)")
    (residual,) = _find(r"conv3_residual\s+(\d+)\s+[\d.]+\s+[\d.]+", text, "the paper (Table 4)")
    (bn_relu,) = _find(r"BN\+ReLU\s+(\d+)\s+[\d.]+\s+[\d.]+", text, "the paper (Table 4)")
    assert cfg.selfplay.games == int(games)
    assert (cfg.train.ranks, cfg.train.batch_per_rank) == (int(ranks), int(batch))
    assert int(ranks) * int(batch) == int(total) and batch == batch2  # the global batch; Table 3's batches
    assert cfg.window.generations == int(window)
    assert len(loops) == 2 and cfg.generations == int(loops[0]) and cfg.evaluate.every == 1
    assert cfg.board_size == int(board) == int(board2) and num_planes(cfg.features) == int(planes)
    assert 2 * cfg.model.blocks == int(residual) and 2 * cfg.model.blocks + 1 == int(bn_relu)
    assert cfg.evaluate.final_games == 0 and not cfg.evaluate.final_equal_time  # every model meets the target


def test_paper_yaml_holds_mlperfs_values():
    text = " ".join(_shared_text("design/ANCHORS.md").split())
    cfg = from_dict(yaml.safe_load((REPO / "config" / "paper.yaml").read_text()))
    blocks, filters, fc, features = _find(
        r"MLPerf 19x19: \*\*(\d+) blocks x (\d+) filters\*\*, fc (\d+), `(\w+)`", text, "ANCHORS.md"
    )
    readouts, fast_share, fast = _find(
        r"MLPerf v0\.7: (\d+) readouts, but (\d+)% of moves use only (\d+)", text, "ANCHORS.md"
    )
    lr = _find(
        r"warm-up ([\d.]+) -> ([\d.]+) -> ([\d.]+) -> (\d+\.\d+) at steps (\d+)/(\d+)/(\d+)",
        text,
        "ANCHORS.md",
    )
    window, share = _find(
        r"MLPerf window: the last (\d+) models' games, (\d+)% of positions", text, "ANCHORS.md"
    )
    (games,) = _find(r"MLPerf iteration: at least (\d+) games per model", text, "ANCHORS.md")
    c_base, c_init = _find(r"c_base (\d+), c_init (\d+\.\d+)", text, "ANCHORS.md")
    (noise,) = _find(r"Dirichlet noise at the root:.*?weight (\d+\.\d+)", text, "ANCHORS.md")
    resign, no_resign = _find(r"Resign below (-\d+\.\d+).*?disabled in (\d+)% of games", text, "ANCHORS.md")
    l2, momentum = _find(r"L2 \(([\d.e-]+);.*?SGD momentum (\d+\.\d+)", text, "ANCHORS.md")
    m, s, t = cfg.model, cfg.selfplay, cfg.train
    assert (m.blocks, m.filters, m.fc_width, cfg.features) == (int(blocks), int(filters), int(fc), features)
    assert "## Network (AlphaGo Zero dual head)" in _shared_text("design/ANCHORS.md")
    assert not m.aux_heads and not m.global_pooling  # the dual head: policy and value only
    assert (s.readouts, s.fast_readouts, s.full_search_fraction) == (
        int(readouts),
        int(fast),
        1 - int(fast_share) / 100,
    )
    rates, steps = [float(x) for x in lr[:4]], [0, *(int(x) for x in lr[4:])]
    assert t.learning_rate == tuple(zip(steps, rates, strict=True))
    assert (cfg.window.generations, cfg.window.sample_fraction) == (int(window), int(share) / 100)
    assert s.games >= int(games) and (s.c_base, s.c_init, s.dirichlet_weight) == (
        float(c_base),
        float(c_init),
        float(noise),
    )
    assert (s.resign_threshold, s.resign_disabled_fraction) == (float(resign), int(no_resign) / 100)
    assert (t.l2, t.momentum, t.replay_ratio, t.ema_decay) == (float(l2), float(momentum), None, None)
    assert s.search == "puct" and s.readouts_schedule is None and cfg.window.generations_schedule is None


# ---- the ablation specs: a frozen base, and the rows of their committed tables


def _table(section: str) -> dict[str, str]:
    """The first two cells of each row of the table under `section` of docs/BENCHMARKS.md: name -> text."""
    text = (REPO / "docs" / "BENCHMARKS.md").read_text()
    body = text[text.index(section) :].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([^`]+)` \| (.*?) \|", body, flags=re.M)
    assert rows, f"docs/BENCHMARKS.md has no table under {section!r}"
    return dict(rows)


def _effective(data: dict) -> dict:
    return {k: v for k, v in _flat(from_dict(data).to_dict()).items() if k != "root"}


@pytest.mark.parametrize("spec_name", sorted(TABLES))
def test_the_ablation_rows_are_the_committed_tables(spec_name):
    spec, rows = ablation.load_spec(str(REPO / "config" / "ablation" / spec_name))
    assert spec["base"] == REPO / "config" / "ablation" / f"base-{Path(spec_name).stem}.yaml"
    warm = (spec.get("warm_start") or {}).get("name")
    default = _effective(ablation.row_config(spec, next(r for r in rows if r.name == "default")))
    seen = {}
    for row in rows:
        config = _effective(ablation.row_config(spec, row))
        changed = {k for k in config if config[k] != default[k]}
        # only what its `set` names (which may restate a value for clarity: pcr-16's fast_readouts 4)
        assert changed <= set(_flat(row.overrides)), (
            f"row {row.name} also changes {changed - set(_flat(row.overrides))}"
        )
        assert bool(changed) == bool(row.overrides), f"row {row.name}'s `set` changes nothing over the base"
        if row.name != warm:  # the warm start is the default's first minutes
            key = repr(sorted(config.items()))
            assert key not in seen, f"rows {seen.get(key)} and {row.name} are the same config"
            seen[key] = row.name
    section, _ = TABLES[spec_name]
    by_name = {row.name: row for row in rows}
    for name, cell in _table(section).items():
        assert name in by_name, f"the table's row {name} is not in config/ablation/{spec_name}"
        if cell.startswith("`"):  # the older table gives the keys the row changes
            assert yaml.safe_load("{" + cell.strip("`") + "}") == by_name[name].overrides, name
        elif spec_name == "rows.yaml":
            assert by_name[name].overrides == {} and cell.startswith("none"), name
        else:  # the hour's table gives the row's `why`
            assert cell == by_name[name].why, name


@pytest.mark.parametrize("spec_name", sorted(TABLES))
def test_the_ablation_base_is_config_yaml_as_its_table_ran(spec_name):
    _, commit = TABLES[spec_name]
    try:
        done = subprocess.run(
            ["git", "-C", str(REPO), "show", f"{commit}:config.yaml"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        pytest.skip(f"no git: {exc}")
    if done.returncode != 0:
        pytest.skip(f"commit {commit} is not in this clone (a shallow one): {done.stderr.strip()}")
    then = _flat(yaml.safe_load(done.stdout))
    base = _flat(
        yaml.safe_load((REPO / "config" / "ablation" / f"base-{Path(spec_name).stem}.yaml").read_text())
    )
    assert {
        k: base[k] for k in then
    } == then  # keys added since carry the value that keeps that run's behaviour


SPECS = sorted(p.name for p in (REPO / "config" / "ablation").glob("*.yaml") if not p.name.startswith("base"))


def test_the_ablation_rows_do_not_change_with_config_yaml(tmp_path, monkeypatch):
    """Every spec under config/ablation (those with a committed table and those still running: value.yaml)."""
    assert {"hour.yaml", "rows.yaml", "value.yaml"} <= set(SPECS)
    specs = [ablation.load_spec(str(REPO / "config" / "ablation" / name)) for name in SPECS]
    before = [[ablation.row_config(spec, row) for row in rows] for spec, rows in specs]
    monkeypatch.setattr(ablation, "REPO", _changed_config_yaml(tmp_path))  # where config.yaml is read from
    assert [[ablation.row_config(spec, row) for row in rows] for spec, rows in specs] == before


def test_a_spec_without_a_full_base_is_refused(tmp_path):
    spec = tmp_path / "spec.yaml"
    partial = tmp_path / "partial.yaml"
    partial.write_text(yaml.safe_dump({"board_size": 5, "model": {"blocks": 1}}))
    for base, says in ((None, "needs `base:`"), (str(tmp_path / "absent.yaml"), "cannot read"),
                       (str(partial), "does not state root, seed, komi")):  # fmt: skip
        spec.write_text(yaml.safe_dump({"rows": [{"name": "default"}], **({"base": base} if base else {})}))
        with pytest.raises(SystemExit, match=re.escape(says)):
            ablation.load_spec(str(spec))
