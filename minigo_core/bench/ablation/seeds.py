"""The ablation's seed replicates (a spec with `seeds:`): every row run once per run seed, and its table.

Two runs of one config with other seeds (other self-play games, samples and training draws) land far further
apart than a rating's +-60 Elo: the value ablation's `vmix-0.5` rated 1376 [1316, 1435] and a rerun of its
config 1093 [1034, 1153] at the same generation. So a row's Elo is the mean over its seeds, and a difference
between two rows gets its 95% interval from how far the seeds of one row land apart, pooled over every row
with two or more rated seeds (the same spread is assumed for every row):

    s^2 = sum over rows i, seeds j of (elo_ij - mean_i)^2 / df,   df = sum over those rows of (n_i - 1)
    half-width of mean_a - mean_b = t_0.975(df) * s * sqrt(1/n_a + 1/n_b)

The spread of a row's seeds holds its ratings' own error too (each replicate is rated to +-`half_width`), so
the interval counts both. With no row rated at two seeds yet (df 0) a difference gets the ratings' intervals
alone, in quadrature, as without seeds, and the table says so.

A row that branches from another (`branch: {row: R, ...}`) shares R's run, seed for seed, up to the branch
point, so the two are not independent: its difference to R is also given paired by seed, the mean over the
seeds both rated of (row - R), with the 95% interval from the spread of those differences,
t_0.975(n - 1) * sd / sqrt(n); with one pair, the two ratings' intervals in quadrature (they leave out how far
a second half alone lands from another).
"""

from __future__ import annotations

import math

BASELINE = "default"  # the row the differences are taken against, unless a row's `against` names another
# Student's t, two-sided 95% (the 0.975 quantile), for 1..30 degrees of freedom; beyond, a series in 1/df
T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
        2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
        2.045, 2.042)  # fmt: skip
Z975 = 1.959964


def from_spec(spec: dict, where: str) -> list[int]:
    """The spec's `seeds`: distinct integers >= 0, at least one. SystemExit naming what is wrong: a spec
    without `rating:` (the seeds' table is the ratings'), one with `warm_start:` (one base run for all seeds
    would make the seeds' runs share their first generations), a row whose `set` names `seed` (the
    replicates' seed would override it), or a row name with `@` (the replicates' names use it)."""
    seeds = spec.get("seeds")
    good = (
        isinstance(seeds, list)
        and seeds
        and all(isinstance(s, int) and not isinstance(s, bool) for s in seeds)
    )
    if not good or min(seeds) < 0 or len(set(seeds)) != len(seeds):
        raise SystemExit(f"{where}: `seeds` must be a list of distinct integers >= 0, got {seeds!r}")
    if "rating" not in spec:
        raise SystemExit(f"{where}: `seeds` needs `rating:`: the replicates are compared by their ratings")
    if isinstance(spec.get("warm_start"), dict):
        raise SystemExit(f"{where}: `seeds` and `warm_start` do not go together: leave one out")
    for entry in spec["rows"]:
        if "seed" in (entry.get("set") or {}):
            raise SystemExit(
                f"{where}: row {entry['name']}: sets `seed`, which the spec's `seeds` override: leave it out "
                "(the row's replicates are its runs at the seeds)"
            )
        if "@" in str(entry["name"]):
            raise SystemExit(f"{where}: row {entry['name']}: a name with `@` (the replicates' names use it)")
    return list(seeds)


def t975(df: int) -> float:
    """The 0.975 quantile of Student's t with `df` >= 1 degrees of freedom (the table to 30, then the
    Cornish-Fisher series in 1/df, within 0.001 of the exact value there)."""
    if df < 1:
        raise ValueError(f"t quantile: needs df >= 1, got {df}")
    if df <= len(T975):
        return T975[df - 1]
    z = Z975
    return (
        z
        + (z**3 + z) / (4 * df)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)
    )


def pooled_sd(elos: dict[str, list[float]]) -> tuple[float | None, int]:
    """The pooled between-seed standard deviation over the rows with >= 2 values, and its degrees of
    freedom sum(n_i - 1); (None, 0) when no row has two."""
    squares, df = 0.0, 0
    for values in elos.values():
        if len(values) >= 2:
            mean = sum(values) / len(values)
            squares += sum((v - mean) ** 2 for v in values)
            df += len(values) - 1
    return (math.sqrt(squares / df), df) if df else (None, 0)


def difference(a: dict, b: dict, sd: float | None, df: int) -> dict | None:
    """Row `a`'s mean Elo minus row `b`'s (summaries of `summarize`) with its 95% half-width: from the
    pooled spread (`interval` "seeds"), or, with df 0, the two single ratings' intervals in quadrature
    (`interval` "rating"). None when either row has no rated seed."""
    if not a["n"] or not b["n"]:
        return None
    diff = a["mean"] - b["mean"]
    if sd is not None:
        half = t975(df) * sd * math.sqrt(1 / a["n"] + 1 / b["n"])
        return {"elo": round(diff, 1), "half_width": round(half, 1), "interval": "seeds"}
    half = 0.0 if a is b else math.hypot(a["rating_half_width"], b["rating_half_width"])
    return {"elo": round(diff, 1), "half_width": round(half, 1), "interval": "rating"}


def _half_width(replicate: dict) -> float:
    """A rated replicate's 95% half-width, from its `ci95`."""
    lo, hi = replicate["ci95"]
    return (hi - lo) / 2


def paired(row: dict, source: dict) -> dict | None:
    """A branch row's difference to the row it branched from, paired by seed (summaries of `summarize`): the
    mean of the per-seed differences over the seeds both rated, its 95% half-width (`interval` "pairs", or
    "rating" with one pair) and `pairs`. None when no seed has both."""
    theirs = {r["seed"]: r for r in source["replicates"] if r["elo"] is not None}
    mine = [r for r in row["replicates"] if r["elo"] is not None]
    pairs = [(r, theirs[r["seed"]]) for r in mine if r["seed"] in theirs]
    if not pairs:
        return None
    diffs = [a["elo"] - b["elo"] for a, b in pairs]
    mean = sum(diffs) / len(diffs)
    if len(diffs) >= 2:
        sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (len(diffs) - 1))
        half, interval = t975(len(diffs) - 1) * sd / math.sqrt(len(diffs)), "pairs"
    else:
        (a, b), interval = pairs[0], "rating"
        half = math.hypot(_half_width(a), _half_width(b))
    return {"elo": round(mean, 1), "half_width": round(half, 1), "interval": interval, "pairs": len(diffs),
            "seeds": [a["seed"] for a, _ in pairs]}  # fmt: skip


def summarize(entries: list[dict], against: dict[str, str], branches: dict[str, str] | None = None) -> dict:
    """Per row of the spec, from its replicates' records (`ladder.entries`, each with `row` and `seed`): n
    rated seeds, mean Elo, SD (n >= 2), the replicates' Elo values, and its differences to `default` and to
    the row `against` names; a row that `branches` maps to the row it branched from, its difference to that
    row paired by seed (`branch_of`, `vs_branch`); with the pooled SD, its df and t. Rows in the order of
    their first replicate."""
    rows: dict[str, dict] = {}
    for e in sorted(entries, key=lambda e: (e.get("seed") is None, e.get("seed") or 0)):
        name = e.get("row", e["name"])
        row = rows.setdefault(name, {"name": name, "why": e.get("why", ""), "replicates": []})
        rating = e.get("rating")
        row["replicates"].append(
            {
                "name": e["name"],
                "seed": e.get("seed"),
                "elo": rating["elo"] if rating else None,
                "ci95": rating["ci95"] if rating else None,
                "last_generation": e.get("last_generation"),
            }
        )
    for row in rows.values():
        rated = [r for r in row["replicates"] if r["elo"] is not None]
        row["n"] = len(rated)
        row["elos"] = [r["elo"] for r in rated]
        row["mean"] = round(sum(row["elos"]) / len(rated), 1) if rated else None
        row["sd"] = round(pooled_sd({"": row["elos"]})[0], 1) if len(rated) >= 2 else None
        halves = [_half_width(r) for r in rated]
        row["rating_half_width"] = halves[0] if len(halves) == 1 else None
    sd, df = pooled_sd({name: row["elos"] for name, row in rows.items()})
    base = rows.get(BASELINE)
    for row in rows.values():
        if base is not None:
            row["vs_default"] = difference(row, base, sd, df)
        ref = against.get(row["name"], BASELINE)
        if ref != BASELINE and ref != row["name"] and ref in rows:
            row["against"] = ref
            row["vs_against"] = difference(row, rows[ref], sd, df)
        source = (branches or {}).get(row["name"])
        if source in rows and source != row["name"]:
            row["branch_of"] = source
            row["vs_branch"] = paired(row, rows[source])
    return {"pooled_sd": None if sd is None else round(sd, 1), "df": df, "t975": t975(df) if df else None,
            "rows": list(rows.values())}  # fmt: skip


def describe(seeds: list[int], summary: dict) -> str:
    """The header's sentence on the seeds and the pooled spread."""
    text = (
        f"The spec runs every row at seeds {', '.join(map(str, seeds))} (`seed: S` merged last; `ROW@sS`); "
        "each row's mean is over the seeds rated so far. "
    )
    if summary["df"]:
        text += (
            f"Pooled between-seed SD {summary['pooled_sd']:.0f} Elo (df {summary['df']}); a difference's 95% "
            f"interval: t(df) {summary['t975']:.3f} x SD x sqrt(1/n_a + 1/n_b)."
        )
    else:
        text += "No replicate yet (df 0): a difference's interval is its two ratings' alone."
    if any("branch_of" in row for row in summary["rows"]):
        text += (
            " A branch row against the row it branched from, paired by seed (they share the run up to the "
            "branch): the mean of the per-seed differences, 95% interval t(n - 1) x their SD / sqrt(n); with "
            "one pair, the two ratings' intervals alone."
        )
    return text


def _diff_cell(diff: dict | None, suffix: str = "") -> str:
    if diff is None:
        return "-"
    note = " (ratings only: no replicate yet)" if diff["interval"] == "rating" else ""
    return f"{diff['elo']:+.0f} +- {diff['half_width']:.0f}{suffix}{note}"


def _paired_cell(row: dict) -> str:
    diff = row.get("vs_branch")
    if diff is None:
        return "-" if "branch_of" not in row else f"- vs `{row['branch_of']}` (no seed rated in both)"
    pairs = f"{diff['pairs']} pair" + ("s" if diff["pairs"] != 1 else "")
    note = ", ratings only" if diff["interval"] == "rating" else ""
    return f"{diff['elo']:+.0f} +- {diff['half_width']:.0f} vs `{row['branch_of']}` ({pairs}{note})"


def _replicate_cell(r: dict) -> str:
    if r["elo"] is None:
        return f"s{r['seed']}: " + ("no model" if r["last_generation"] is None else "not rated")
    lo, hi = r["ci95"]
    return f"s{r['seed']}: {r['elo']:.0f} [{lo:.0f}, {hi:.0f}]"


def table(
    summary: dict, measure_cells: dict[str, list[str]] | None = None, measure_head: list[str] = ()
) -> str:
    """The Markdown table, one line a row of the spec, sorted by mean Elo (rows without one last); the
    measures' cells (of each row's first seed) when given."""
    stacks = any("against" in row for row in summary["rows"])
    head = ["row", "what changes", "seeds rated", "mean fixed-scale Elo", "replicates' Elo [95%]",
            f"vs `{BASELINE}` (95%)"]  # fmt: skip
    head += ["vs the row it stacks on (95%)"] if stacks else []
    branched = any("branch_of" in row for row in summary["rows"])
    head += ["vs the row it branched from, paired by seed (95%)"] if branched else []
    head += list(measure_head)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    order = sorted(summary["rows"], key=lambda r: -r["mean"] if r["mean"] is not None else math.inf)
    for row in order:
        mean = "-" if row["mean"] is None else f"{row['mean']:.0f}"
        mean += f" (sd {row['sd']:.0f})" if row["sd"] is not None else ""
        vs_default = "(baseline)" if row["name"] == BASELINE else _diff_cell(row.get("vs_default"))
        stacked = _diff_cell(row.get("vs_against"), f" vs `{row['against']}`") if "against" in row else "-"
        cells = [f"`{row['name']}`", row["why"], str(row["n"]), mean,
                 ", ".join(map(_replicate_cell, row["replicates"])), vs_default]  # fmt: skip
        cells += [stacked] if stacks else []
        cells += [_paired_cell(row)] if branched else []
        cells += (measure_cells or {}).get(row["name"], ["-"] * len(measure_head)) if measure_head else []
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
