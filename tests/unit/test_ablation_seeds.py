"""`bench ablation` with `seeds:`: every row run once per run seed, in passes (every row's first seed, then
every row's second, ...), the first in the row's own directory (a row run before keeps its result), the
others in `ROW@sS`; the table's mean Elo per row and its differences with a 95% interval from the pooled
between-seed spread.

The runs are a stand-in for `minigo run` (`ablation.run_command` patched: a process that writes the row's
model files) and the ratings are given (`ladder.rate_rows` patched); `minigo run` and `minigo ladder rate`
are tested elsewhere."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
import yaml

from minigo_core.bench.ablation import driver as ablation
from minigo_core.bench.ablation import ladder, seeds

FAKE_RUN = """
import sys, pathlib, yaml
from minigo_core.data import layout
if "--unlock" in sys.argv:
    sys.exit(0)
cfg = yaml.safe_load(open(sys.argv[2]))
open(sys.argv[1], "a").write(pathlib.Path(sys.argv[2]).parent.name + "\\n")
for g in range(cfg["generations"] + 1):
    path = pathlib.Path(layout.model_path(cfg["root"], g))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"model")
"""


def _spec(tmp_path: Path, spec_seeds: list[int] | None, **extra: object) -> Path:
    path = tmp_path / "spec.yaml"
    data = {"budget_minutes": 1, "root": str(tmp_path / "abl"), "base": "config/tiny.yaml",
            "common": {"generations": 1, "evaluate": {"games": 0}},
            "rating": {"readouts": 8}, **({"seeds": spec_seeds} if spec_seeds is not None else {}),
            "rows": [{"name": "default", "why": "d", "set": {}},
                     {"name": "x", "why": "x", "set": {"selfplay": {"games": 6}}, "against": "default"}],
            **extra}  # fmt: skip
    path.write_text(yaml.safe_dump(data))
    return path


def test_a_spec_with_seeds_expands_to_replicates_in_passes(tmp_path):
    spec, rows = ablation.load_spec(str(_spec(tmp_path, [7, 2, 5])))
    root = tmp_path / "abl"
    assert [(r.name, r.group, r.seed) for r in rows] == [
        ("default", "default", 7), ("x", "x", 7),
        ("default@s2", "default", 2), ("x@s2", "x", 2),
        ("default@s5", "default", 5), ("x@s5", "x", 5),
    ]  # fmt: skip
    assert [r.root for r in rows] == [root / r.name for r in rows]
    for row in rows:  # the seed merged last, over the row's own keys; the row's run root
        data = ablation.row_config(spec, row)
        assert data["seed"] == row.seed and data["root"] == str(root / row.name / "run")
        assert data["selfplay"]["games"] == (6 if row.group == "x" else 4)
    _, plain = ablation.load_spec(str(_spec(tmp_path, None)))  # without seeds: one run a row, as before
    assert [(r.name, r.seed) for r in plain] == [("default", None), ("x", None)]
    assert ablation.row_config(spec, plain[0])["seed"] == 7  # tiny.yaml's own


def test_rows_selects_a_rows_seeds_or_one_replicate_the_first_seeds_too(tmp_path):
    _, rows = ablation.load_spec(str(_spec(tmp_path, [7, 2, 5])))
    names = lambda arg: [r.name for r in ablation.selected(rows, arg)]  # noqa: E731
    assert names("") == [r.name for r in rows]
    assert names("x") == ["x", "x@s2", "x@s5"]
    assert names("x@s7") == ["x"]  # the first seed's replicate alone, by its seed
    assert names("x@s2,default@s7") == ["default", "x@s2"]
    assert names("x@s9") == []


def test_rows_run_all_their_seeds_with_the_seed_in_their_row_yaml(tmp_path, monkeypatch):
    calls, script = tmp_path / "calls.txt", tmp_path / "fake_run.py"
    script.write_text(FAKE_RUN)
    monkeypatch.setattr(ablation, "run_command", lambda row: [sys.executable, str(script), str(calls),
                                                              str(row.config_path)])  # fmt: skip
    monkeypatch.setattr(ablation, "_stop_on_signals", lambda: None)
    path = _spec(tmp_path, [1, 2, 3])
    assert ablation.main(["--spec", str(path), "--rows", "x", "--no-rating"]) == 0
    assert calls.read_text().split() == ["x", "x@s2", "x@s3"]
    for name, seed in (("x", 1), ("x@s2", 2), ("x@s3", 3)):
        row_dir = tmp_path / "abl" / name
        assert yaml.safe_load((row_dir / "row.yaml").read_text())["seed"] == seed
        result = json.loads((row_dir / "row_result.json").read_text())
        assert (result["name"], result["row"], result["seed"], result["last_generation"]) == (
            name,
            "x",
            seed,
            1,
        )
    assert not (tmp_path / "abl" / "default").exists()
    calls.unlink()  # a second invocation runs nothing again: every replicate has its result
    assert ablation.main(["--spec", str(path), "--no-rating"]) == 0
    assert calls.read_text().split() == ["default", "default@s2", "default@s3"]


def test_a_row_run_before_seeds_keeps_its_result_unless_its_seed_differs(tmp_path):
    spec, (row, _) = ablation.load_spec(str(_spec(tmp_path, None)))
    row.root.mkdir(parents=True)  # as the driver left it without seeds: the config's own seed, 7
    data = ablation.row_config(spec, row)
    row.config_path.write_text(yaml.safe_dump(data, sort_keys=False))
    row.result_path.write_text(json.dumps({"name": "default", "last_generation": 1}))
    seeded, rows = ablation.load_spec(str(_spec(tmp_path, [7, 8])))
    assert rows[0].root == row.root
    assert ablation.kept_result(rows[0]) == {
        "name": "default",
        "last_generation": 1,
        "row": "default",
        "seed": 7,
    }
    assert ablation.kept_result(rows[2]) is None  # default@s8: not run yet
    (row.root / ablation.PROGRESS_FILE).write_text(
        json.dumps({"spent_s": 5.0, "pieces": 1, "warm_start": None})
    )
    assert ablation._resumable(rows[0], ablation.row_config(seeded, rows[0])) is not None  # a cut-off one too
    _, other = ablation.load_spec(str(_spec(tmp_path, [8, 7])))
    with pytest.raises(SystemExit, match="made with seed 7.*gives? it seed 8"):
        ablation.kept_result(other[0])


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        ({"seeds": []}, "distinct integers"),
        ({"seeds": [1, 1]}, "distinct integers"),
        ({"seeds": [1, "2"]}, "distinct integers"),
        ({"seeds": [1, 2], "rows": [{"name": "default", "set": {"seed": 3}}]}, "sets `seed`"),
        ({"seeds": [1, 2], "rows": [{"name": "a@b"}]}, "a name with `@`"),
        ({"seeds": [1, 2], "rating": "drop"}, "needs `rating:`"),
    ],
)
def test_a_bad_seeds_key_is_refused(tmp_path, extra, says):
    path = _spec(tmp_path, None, **extra)
    data = yaml.safe_load(path.read_text())
    if data["rating"] == "drop":  # a spec without `rating:`
        del data["rating"]
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(SystemExit, match=says):
        ablation.load_spec(str(path))


def test_the_t_quantile_and_the_pooled_sd_on_known_numbers():
    assert seeds.t975(1) == 12.706 and seeds.t975(3) == 3.182 and seeds.t975(30) == 2.042
    assert abs(seeds.t975(31) - 2.0395) < 0.001 and abs(seeds.t975(120) - 1.9799) < 0.001
    assert abs(seeds.t975(10**6) - 1.96) < 0.001
    with pytest.raises(ValueError):
        seeds.t975(0)
    # a: mean 1100, squares 2 x 100^2; b: mean 1000, squares 2 x 100^2; c: one seed, no spread
    sd, df = seeds.pooled_sd({"a": [1000.0, 1200.0], "b": [900.0, 1000.0, 1100.0], "c": [1500.0]})
    assert df == 1 + 2 and sd == pytest.approx(math.sqrt(40000 / 3))
    assert seeds.pooled_sd({"a": [1000.0], "b": []}) == (None, 0)
    a, b = {"n": 2, "mean": 1100.0}, {"n": 3, "mean": 1000.0}
    diff = seeds.difference(a, b, sd, df)  # 3.182 x 115.47 x sqrt(1/2 + 1/3) = 335.4
    assert diff == {"elo": 100.0, "half_width": 335.4, "interval": "seeds"}
    assert seeds.difference(a, {"n": 0, "mean": None}, sd, df) is None


def _rating(elo: float, half: float = 60.0) -> dict:
    return {
        "elo": elo,
        "ci95": [elo - half, elo + half],
        "games": 100,
        "anchor": "gnugo:10",
        "anchor_elo": 1800,
    }


def _report(
    tmp_path: Path, monkeypatch, ratings: dict[str, dict | None], branch: bool = False
) -> tuple[str, dict]:
    """`ladder.report` over given ratings of the rows' replicates (seeds 1 and 2 of default and x; with
    `branch`, x branches from default)."""
    monkeypatch.setattr(ladder, "rate_rows", lambda root, names, settings: {n: ratings.get(n) for n in names})
    spec_rows = [{"name": "default", "why": "d"}, {"name": "x", "why": "x", "against": "default"}]
    if branch:
        spec_rows[1]["branch"] = {"row": "default", "generation": 1}
    spec = {"root": tmp_path, "rating": ladder.RatingSettings(), "seeds": [1, 2], "rows": spec_rows}
    results = [{"name": n if s == 1 else f"{n}@s{s}", "row": n, "seed": s, "why": n, "set": {}}
               for s in (1, 2) for n in ("default", "x")]  # fmt: skip
    ladder.report(spec, results, ["test"])
    return (tmp_path / "ablation.md").read_text(), json.loads((tmp_path / "ablation.json").read_text())


def test_the_table_gives_each_rows_mean_and_n_with_the_pooled_interval(tmp_path, monkeypatch):
    ratings = {"default": _rating(1000), "default@s2": _rating(1200), "x": _rating(1500), "x@s2": None}
    text, summary = _report(tmp_path, monkeypatch, ratings)
    # default: 1000, 1200 -> mean 1100, sd 141.4 (df 1, the only row with two); x: one rated seed, 1500
    assert "Pooled between-seed SD 141 Elo (df 1)" in text
    lines = {line.split(" | ")[0]: line for line in text.splitlines() if line.startswith("| `")}
    assert (
        "| 2 | 1100 (sd 141) | s1: 1000 [940, 1060], s2: 1200 [1140, 1260] | (baseline) |"
        in lines["| `default`"]
    )
    # +400 +- 12.706 x 141.42 x sqrt(1/1 + 1/2) = 2200.7
    assert "| 1 | 1500 | s1: 1500 [1440, 1560], s2: no model | +400 +- 2201 |" in lines["| `x`"]
    assert list(lines) == ["| `x`", "| `default`"]  # by mean Elo
    block = summary["seeds"]
    assert block["seeds"] == [1, 2] and block["df"] == 1 and block["pooled_sd"] == 141.4
    by = {r["name"]: r for r in block["rows"]}
    assert (by["default"]["n"], by["default"]["mean"], by["default"]["sd"]) == (2, 1100.0, 141.4)
    assert by["x"]["vs_default"] == {"elo": 400.0, "half_width": 2200.7, "interval": "seeds"}
    assert [r["elo"] for r in by["x"]["replicates"]] == [1500, None]
    assert {(e["name"], e["seed"]) for e in summary["rows"]} == {("default", 1), ("x", 1), ("default@s2", 2),
                                                                 ("x@s2", 2)}  # fmt: skip


def test_without_a_replicate_the_interval_is_the_ratings_alone(tmp_path, monkeypatch):
    text, summary = _report(tmp_path, monkeypatch, {"default": _rating(1000, 30), "x": _rating(1100, 40)})
    assert "No replicate yet (df 0)" in text and summary["seeds"]["pooled_sd"] is None
    assert "+100 +- 50 (ratings only: no replicate yet)" in text  # hypot(30, 40), as without seeds


def test_a_branch_row_gets_its_difference_to_its_source_paired_by_seed(tmp_path, monkeypatch):
    ratings = {"default": _rating(1000), "default@s2": _rating(1200)}
    ratings |= {"x": _rating(1090), "x@s2": _rating(1250)}
    text, summary = _report(tmp_path, monkeypatch, ratings, branch=True)
    # pairs +90 and +50: mean +70, sd 28.28, 12.706 x 28.28 / sqrt(2) = 254.1; unpaired (pooled sd 128.1,
    # df 2): 4.303 x 128.06 x sqrt(1/2 + 1/2) = 551.1, which counts the shared first halves as independent
    by = {r["name"]: r for r in summary["seeds"]["rows"]}
    assert by["x"]["vs_branch"] == {"elo": 70.0, "half_width": 254.1, "interval": "pairs", "pairs": 2,
                                    "seeds": [1, 2]}  # fmt: skip
    assert by["x"]["vs_default"]["half_width"] == 551.1 and "vs_branch" not in by["default"]
    assert "vs the row it branched from, paired by seed (95%)" in text
    assert "paired by seed (they share the run up to the branch)" in text
    assert "+70 +- 254 vs `default` (2 pairs) |" in text
    text, summary = _report(tmp_path, monkeypatch, {**ratings, "x@s2": None}, branch=True)
    assert "+90 +- 85 vs `default` (1 pair, ratings only) |" in text  # hypot(60, 60)
    text, _ = _report(tmp_path, monkeypatch, ratings)
    assert "paired by seed" not in text  # no branch row, no column


def test_the_value_spec_runs_its_seeds_in_passes_and_sets_no_seed_of_its_own():
    spec, rows = ablation.load_spec(str(Path(ablation.REPO) / "config" / "ablation" / "value.yaml"))
    assert spec["seeds"][0] == 1 and len(spec["seeds"]) >= 2  # seed 1: the base's, the rows already run
    assert yaml.safe_load(Path(spec["base"]).read_text())["seed"] == spec["seeds"][0]
    assert not [r for r in rows if "seed" in r.overrides]
    per_seed = len(rows) // len(spec["seeds"])  # one pass per seed, in the spec's order
    assert [rows[i * per_seed].name for i in range(len(spec["seeds"]))] == [
        "default" if s == 1 else f"default@s{s}" for s in spec["seeds"]
    ]


def test_merge_adds_an_earlier_files_rows_that_this_root_lacks_and_says_where_they_came_from(
    tmp_path, monkeypatch
):
    (tmp_path / "a").mkdir()
    _, earlier = _report(tmp_path / "a", monkeypatch, {"default": _rating(1000), "x": _rating(1500)})
    for e in earlier["rows"]:  # the earlier session had a row `y` too, and its own `x` (not taken)
        if e["name"] == "x":
            earlier["rows"].append({**e, "name": "y", "row": "y", "rating": _rating(1300)})
            e["rating"] = _rating(100)
    earlier.update(commit="abc1234" + "0" * 33, cpu="Earlier CPU")
    old = tmp_path / "earlier.json"
    old.write_text(json.dumps(earlier))
    monkeypatch.setattr(ladder, "rate_rows", lambda root, names, settings: {n: _rating(1100) for n in names})
    spec = {"root": tmp_path, "rating": ladder.RatingSettings(), "seeds": [1, 2],
            "rows": [{"name": "default", "why": "d"}, {"name": "x", "why": "x"}]}  # fmt: skip
    results = [{"name": n, "row": n, "seed": 1, "why": n, "set": {}} for n in ("default", "x")]
    ladder.report(spec, results, ["test"], [str(old)])
    text = (tmp_path / "ablation.md").read_text()
    summary = json.loads((tmp_path / "ablation.json").read_text())
    by = {e["name"]: e for e in summary["rows"]}
    assert by["x"]["rating"]["elo"] == 1100 and by["y"]["rating"]["elo"] == 1300  # ours, and the file's y
    assert "default@s2" in by and "x@s2" in by  # the earlier replicates this root lacks
    assert [o["rows"] for o in summary["merged_from"]] == [["default", "x"], ["default@s2", "x@s2", "y"]]
    assert summary["merged_from"][1]["commit"].startswith("abc1234") and "(abc1234, Earlier CPU)" in text
    assert "| `y` |" in text
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(SystemExit, match="--merge .*bad.json: not an ablation.json"):
        ladder.report(spec, results, ["test"], [str(tmp_path / "bad.json")])
