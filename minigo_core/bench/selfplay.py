"""Self-play benchmark, compiled engine vs the Python reference: `python -m minigo_core.bench selfplay`.

One run, one model (fresh random weights for the config's net), the same readouts, 1 DSP core, CPU seconds:
- the Python reference (`mcts.py`, one game after another, batches of `parallel_readouts` leaves of one tree):
  readouts/s and where its time goes (network / features + symmetry / tree search + Go rules);
- the compiled engine (`minigo_core.search.engine`) for K games per job in {1, 8, 32, 64}, PUCT and Gumbel:
  readouts/s, games/s, the network's share, features, tree + rules + file writing, batch sizes reached;
- start-up: a real `minigo selfplay --count K` job (the default K), process start to the engine's first
  move, against the job's wall time;
- 19x19 at the paper's net (6x64, mlperf07): the non-network share (a few moves of K games), and the peak
  memory of a K=64 19x19 job at the paper's 800 readouts (`--memory-moves` moves of each game, every one a
  full search; in a process that imports what a job imports, no torch: `bench/_selfplay_memory.py`), with
  its game files' bytes per recorded position;
- game files: bytes per recorded position of each engine row's files (all bytes / positions recorded).
Its last line is one JSON object: `engine_vs_reference`, `non_network_share`, `startup_share`,
`game_bytes_per_position` (the default search and K), `k64_19x19_peak_rss_mib`,
`game_bytes_per_position_19x19` and the rest.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time

from minigo_core.base import config as config_mod
from minigo_core.base.machine import cpu_model
from minigo_core.data.gamefile import write_game
from minigo_core.game import go
from minigo_core.nn import inference, model
from minigo_core.search import engine
from minigo_core.selfplay import selfplay_game
from minigo_core.selfplay.selfplay_game import GameTiming, play_selfplay_game


def _play(net, cfg, games: int, generation: int, model_url: str, out_dir: str, clock) -> dict:

    totals = dict(
        wall_s=0.0,
        search_s=0.0,
        network_s=0.0,
        features_s=0.0,
        readouts=0,
        moves=0,
        bytes=0,
        positions=0,
        files=0,
    )
    for game in range(games):
        timing = GameTiming(clock=clock)
        record = play_selfplay_game(net, cfg, generation, game, model_url, timing=timing)
        size = write_game(os.path.join(out_dir, f"game{game:05d}.arrow"), record)
        for key in ("wall_s", "search_s", "network_s", "features_s", "readouts", "moves"):
            totals[key] += getattr(timing, key)
        totals["bytes"] += size
        totals["positions"] += record.num_positions
        totals["files"] += 1
    return totals


def _report(t: dict, games: int, board_size: int, parallel_readouts: int, unit: str) -> None:
    other = t["search_s"] - t["network_s"] - t["features_s"]
    total = t["wall_s"]
    overhead = (total - t["network_s"]) / total
    batch_ms = 1e3 * t["network_s"] / max(1, t["readouts"] / parallel_readouts)

    def row(name: str, seconds: float, note: str = "") -> None:
        print(f"  {name:<29}{seconds:7.2f} {unit}  {seconds / total:6.1%}  {note}")

    print(
        f"\n{board_size}x{board_size}: {games} game(s), {t['moves']} moves, {t['readouts']} readouts in "
        f"{total:.2f} {unit}:"
    )
    print(
        f"  readouts/s {t['readouts'] / total:8.0f}    moves/s {t['moves'] / total:6.1f}    "
        f"per game {total / games:.2f} {unit}"
    )
    row("network (fused inference)", t["network_s"], f"({batch_ms:.2f} ms per batch)")
    row(
        "features + symmetry",
        t["features_s"],
        f"({1e6 * t['features_s'] / t['readouts']:.0f} us per readout)",
    )
    row("tree search + Go rules", other, f"({1e6 * other / t['readouts']:.0f} us per readout)")
    row("game loop (outside search)", total - t["search_s"])
    verdict = "met" if overhead <= 0.25 else "NOT met"
    print(f"  search overhead (all but the network): {overhead:.1%}   target <= 25%: {verdict}")
    per_position = t["bytes"] / max(1, t["positions"])
    limit = 150 if board_size <= 9 else 700
    print(
        f"  game files: {t['bytes'] / t['files']:.0f} bytes per game, {t['positions']} positions recorded, "
        f"{per_position:.0f} bytes per recorded position   target <= {limit}: "
        f"{'met' if per_position <= limit else 'NOT met'}"
    )


def _go_rules_share(net, cfg, model_url: str, out_dir: str, clock, other_us: float) -> None:
    """One more game, recording the Go-rules calls the search makes; then time those calls again in a loop.

    (Timing each call in place would cost a system call per call for CPU time, more than some calls take.)
    """

    calls: dict[str, list] = {"play_move": [], "all_legal_moves": []}
    originals = {name: getattr(go.Position, name) for name in calls}

    def recording(name):
        original, log = originals[name], calls[name]

        def wrapper(*args):
            log.append(args)
            return original(*args)

        return wrapper

    try:
        for name in calls:
            setattr(go.Position, name, recording(name))
        t = _play(net, cfg, 1, 1, model_url, out_dir, clock)
    finally:
        for name, original in originals.items():
            setattr(go.Position, name, original)
    per_readout = {}
    for name, log in calls.items():
        original = originals[name]
        t0 = clock()
        for args in log:
            original(*args)
        per_readout[name] = 1e6 * (clock() - t0) / t["readouts"]
    rules = sum(per_readout.values())
    print(
        f"  of the {other_us:.0f} us: go.play_move {per_readout['play_move']:.0f} us + go.all_legal_moves "
        f"{per_readout['all_legal_moves']:.0f} us per readout at least (one more game's calls re-timed in a "
        f"warm loop; in the search their caches are cold); the rest, {other_us - rules:.0f} us at most, is "
        "the tree walk, expansion and backup"
    )


def _engine_games(net, cfg, search: str, k: int, out_dir: str, *, max_moves: int = 0) -> dict:
    """K games of one job in the compiled engine, files written as the job writes them; CPU seconds."""
    cfg = dataclasses.replace(cfg, selfplay=dataclasses.replace(cfg.selfplay, search=search))
    settings = engine.settings_for(config_mod.search_settings(cfg), cfg.features, cfg.board_size)
    settings.max_game_length = max_moves
    search_meta = selfplay_game.search_metadata(cfg, "compiled")  # the files name the search the games played
    model = {"url": "bench.safetensors", "generation": 0, "sha256": None}
    os.makedirs(out_dir, exist_ok=True)
    cpu0 = time.process_time()
    games = engine.SelfplayGames(
        net,
        settings,
        board_size=cfg.board_size,
        komi=cfg.komi,
        seed=cfg.seed,
        generation=0,
        first_game=0,
        count=k,
    )
    moves = positions = size = 0
    for game in games.finished():
        record = selfplay_game.compiled_game_record(game, cfg, cfg.features, model, search_meta, 0)
        size += write_game(os.path.join(out_dir, f"game{game.index:05d}.arrow"), record)
        moves += len(game.moves)
        positions += record.num_positions
    cpu = time.process_time() - cpu0
    st = games.stats()
    return {
        "search": search,
        "k": k,
        "cpu_s": cpu,
        "network_s": st.network_s,
        "features_s": st.features_s,
        "engine_s": st.total_s,
        "readouts": st.readouts,
        "moves": moves,
        "positions": positions,
        "bytes_per_position": size / max(1, positions),
        "games": k,
        "mean_batch": st.mean_batch,
        "max_batch": st.max_batch,
        "readouts_per_s": st.readouts / cpu,
        "games_per_s": k / cpu,
        "non_network_share": 1.0 - st.network_s / cpu,
    }


def _engine_row(r: dict) -> None:
    cpu = r["cpu_s"]
    other = cpu - r["network_s"] - r["features_s"]
    print(
        f"  {r['search']:<6} K={r['k']:<3} {r['readouts_per_s']:7.0f} readouts/s "
        f"{r['games_per_s']:6.2f} games/s  "
        f"network {r['network_s'] / cpu:5.1%}  features {r['features_s'] / cpu:5.1%}  "
        f"tree+rules+files {other / cpu:5.1%}  batch mean {r['mean_batch']:5.1f} max {r['max_batch']:3d}  "
        f"({r['readouts']} readouts, {r['moves']} moves, {cpu:.1f} CPU s; "
        f"{r['bytes_per_position']:.0f} bytes per recorded position)"
    )


def _startup_job(cfg_path: str, model_url: str, k: int, out_dir: str) -> dict:
    """A real `minigo selfplay --count K` process: its job record holds process start -> engine."""
    pattern = os.path.join(out_dir, "startup", "game{game:05d}.arrow")
    record = os.path.join(out_dir, "startup", "job00000.json")
    argv = [sys.executable, "-m", "minigo_core.cli", "selfplay", "--config", cfg_path, "--model", model_url,
            "--generation", "0", "--game", "0", "--count", str(k), "--out", pattern, "--record", record,
            "--threads", "1"]  # fmt: skip
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))
    )
    t0 = time.time()
    subprocess.run(argv, check=True, capture_output=True, text=True, env=env)
    wall = time.time() - t0
    with open(record) as f:
        attempt = json.load(f)["attempt"]
    return {
        "startup_s": attempt["startup_s"],
        "startup_cpu_s": attempt["startup_cpu_s"],
        "process_wall_s": wall,
    }


MEMORY_NETS = {"paper": (6, 64), "small": (1, 8)}  # blocks, filters (= fc width) of the memory probe's net


def _memory_probe(cfg, tmp: str, k: int, readouts: int, moves: int, search: str, net_name: str) -> dict:
    """A separate process (`bench/_selfplay_memory.py`, no torch) plays `moves` moves of K 19x19 games at
    `readouts` and writes their files: its peak RSS, bytes/position. `net_name`: the paper's net (6x64,
    mlperf07) or a small one (1x8), whose random outputs grow deeper trees (the most memory seen)."""
    blocks, filters = MEMORY_NETS[net_name]
    paper = config_mod.from_dict(
        {**_paper_config(cfg).to_dict(), "model": {"blocks": blocks, "filters": filters, "fc_width": filters}}
    )
    url = os.path.join(tmp, "probe19.safetensors")
    net = model.random_model(model.ModelConfig.from_run(paper), cfg.seed, backend="torch")
    model.save_model(url, net, {"generation": 0, "kind": "benchmark"})
    argv = [sys.executable, "-m", "minigo_core.bench._selfplay_memory", url, str(k), str(readouts),
            str(moves), search]  # fmt: skip
    out = subprocess.run(argv, check=True, capture_output=True, text=True, env=_env())
    return json.loads(out.stdout.strip().splitlines()[-1])


def _paper_config(cfg) -> config_mod.RunConfig:
    """The run config with the paper's 19x19 net (6x64, mlperf07)."""
    return config_mod.from_dict(
        {
            **cfg.to_dict(),
            "board_size": 19,
            "features": "mlperf07",
            "model": {"blocks": 6, "filters": 64, "fc_width": 64},
        }  # fmt: skip
    )


def _env() -> dict:
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return dict(
        os.environ, PYTHONPATH=os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))
    )


def _engine_vs_reference(args, cfg, model_url: str, tmp: str, result: dict) -> None:
    """The Python reference's games, then the engine's for each search and K; the ratio at the default K."""
    s = cfg.selfplay
    default_k = s.games_per_job
    ref_net = inference.load_for_inference(model_url, backend="dsp")  # the same fused network, one core
    # the reference at its own best: batches of `--reference-parallel` leaves of its one tree (MiniGo's 8)
    p = args.reference_parallel
    ref_cfg = dataclasses.replace(cfg, selfplay=dataclasses.replace(s, parallel_readouts=p))
    t = _play(ref_net, ref_cfg, args.games, 0, model_url, os.path.join(tmp, "ref"), time.process_time)
    print(f"\nPython reference (mcts.py), batches of {p} leaves of one tree (virtual loss):", end="")
    _report(t, args.games, cfg.board_size, p, "CPU s")
    ref_rate = t["readouts"] / t["wall_s"]
    result["reference_readouts_per_s"] = round(ref_rate, 1)
    result["reference_non_network_share"] = round(1 - t["network_s"] / t["wall_s"], 4)

    net = engine.load_network(model_url)  # one DSP core
    print(
        f"\ncompiled engine, K games per job, {max(1, s.parallel_readouts)} leaves per game per batch "
        "(PUCT; Gumbel: 1):"
    )
    rows = []
    for search in args.searches.split(","):
        for k in (int(k) for k in args.ks.split(",") if k):
            r = _engine_games(net, cfg, search, k, os.path.join(tmp, f"{search}{k}"))
            _engine_row(r)
            rows.append(r)
    result["engine"] = [
        {key: (round(v, 4) if isinstance(v, float) else v) for key, v in r.items()} for r in rows
    ]
    default = next((r for r in rows if r["search"] == s.search and r["k"] == default_k), None)
    if default is None:
        default = _engine_games(net, cfg, s.search, default_k, os.path.join(tmp, "default"))
        _engine_row(default)
    ratio = default["readouts_per_s"] / ref_rate
    result["engine_vs_reference"] = round(ratio, 3)
    result["non_network_share"] = round(default["non_network_share"], 4)
    result["game_bytes_per_position"] = round(default["bytes_per_position"], 1)
    limit = 150 if cfg.board_size <= 9 else 700
    per_position = default["bytes_per_position"]
    print(
        f"\ngame files at the default K={default_k} ({s.search}): {per_position:.0f} bytes per recorded "
        f"position (target <= {limit}: {'met' if per_position <= limit else 'NOT met'})"
    )
    print(
        f"at the default K={default_k} ({s.search}): {ratio:.2f}x the reference's readouts/s "
        f"(target >= 5x: {'met' if ratio >= 5 else 'NOT met'}); everything but the network "
        f"{default['non_network_share']:.1%} of CPU time (target <= 10%: "
        f"{'met' if default['non_network_share'] <= 0.10 else 'NOT met'})"
    )


def _startup_section(args, default_k: int, model_url: str, tmp: str, result: dict) -> None:
    st = _startup_job(os.path.abspath(args.config), model_url, default_k, tmp)
    share = st["startup_s"] / st["process_wall_s"]
    result["startup_share"] = round(share, 4)
    result["startup_s"] = st["startup_s"]
    print(
        f"start-up of a `minigo selfplay --count {default_k}` job: {st['startup_s']:.2f}s of "
        f"{st['process_wall_s']:.2f}s = {share:.1%} (target <= 5%: {'met' if share <= 0.05 else 'NOT met'})"
    )


def _paper_section(cfg, moves: int, tmp: str, result: dict) -> None:
    """A few moves of 16 19x19 games with the paper's net (6x64, mlperf07): the non-network share."""
    paper = _paper_config(cfg)
    url19 = os.path.join(tmp, "paper19.safetensors")
    net19 = model.random_model(model.ModelConfig.from_run(paper), cfg.seed, backend="torch")
    model.save_model(url19, net19, {"generation": 0, "kind": "benchmark"})
    engine19 = engine.load_network(url19)  # one DSP core
    k19 = 16
    r = _engine_games(engine19, paper, cfg.selfplay.search, k19, os.path.join(tmp, "p19"), max_moves=moves)
    print(f"\n19x19, 6x64 mlperf07 (the paper's net), {moves} moves of {k19} games:")
    _engine_row(r)
    result["non_network_share_19x19"] = round(r["non_network_share"], 4)
    print(
        f"  everything but the network {r['non_network_share']:.1%} (target <= 5%: "
        f"{'met' if r['non_network_share'] <= 0.05 else 'NOT met'})"
    )


def _memory_section(cfg, moves: int, search: str, net_name: str, tmp: str, result: dict) -> None:
    probe = _memory_probe(cfg, tmp, 64, 800, moves, search, net_name)
    mib, per_position = probe["peak_rss_mib"], probe["bytes_per_position"]
    result["k64_19x19_peak_rss_mib"] = mib
    result["k64_19x19_probe"] = {
        "net": net_name,
        "search": search,
        "moves": moves,
        "positions": probe["positions"],
    }
    result["game_bytes_per_position_19x19"] = per_position
    print(
        f"\nK=64 19x19 job at 800 readouts, {net_name} net, {search}, the first {moves} moves of each game: "
        f"peak RSS {mib} MiB (target < 1024: {'met' if mib < 1024 else 'NOT met'}); its game files "
        f"{per_position:.0f} bytes per recorded position beyond a file's fixed part (target <= 700: "
        f"{'met' if per_position <= 700 else 'NOT met'})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m minigo_core.bench selfplay",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--config", default="config.yaml", help="run config (default: config.yaml)")
    parser.add_argument("--games", type=int, default=2, help="games of the Python reference (default 2)")
    parser.add_argument(
        "--reference-parallel", type=int, default=8, help="leaves per batch of the reference (default 8)"
    )
    parser.add_argument("--ks", default="1,8,32,64", help="games per job for the engine (default 1,8,32,64)")
    parser.add_argument("--searches", default="puct,gumbel", help="engine searches (default puct,gumbel)")
    parser.add_argument(
        "--moves-19", type=int, default=6, help="moves per 19x19 game at the paper's net (0: skip)"
    )
    parser.add_argument("--no-startup", action="store_true", help="skip the start-up job")
    parser.add_argument("--no-memory", action="store_true", help="skip the K=64 19x19 memory probe")
    parser.add_argument(
        "--memory-moves", type=int, default=4, help="moves of each game of the memory probe (default 4)"
    )
    parser.add_argument(
        "--memory-search", default=None, help="search of the memory probe (default: the config's)"
    )
    parser.add_argument(
        "--memory-net", choices=sorted(MEMORY_NETS), default="paper", help="net of the memory probe (paper)"
    )
    args = parser.parse_args(argv)

    cfg = config_mod.load_config(args.config)
    s = cfg.selfplay
    default_k = s.games_per_job
    cpu = cpu_model()
    print(
        f"self-play benchmark on {cpu}: {cfg.board_size}x{cfg.board_size}, {cfg.model.blocks} blocks x "
        f"{cfg.model.filters} filters, {cfg.features}; readouts {s.readouts} on "
        f"{s.full_search_fraction:g} of moves, {s.fast_readouts} on the rest; 1 DSP core; CPU seconds; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    result: dict = {"benchmark": "selfplay", "cpu": cpu, "config": args.config, "default_k": default_k}
    with tempfile.TemporaryDirectory(prefix="minigo-bench-selfplay-") as tmp:
        model_url = os.path.join(tmp, "gen0000.safetensors")
        torch_net = model.random_model(model.ModelConfig.from_run(cfg), cfg.seed, backend="torch")
        model.save_model(model_url, torch_net, {"generation": 0, "kind": "benchmark"})
        _engine_vs_reference(args, cfg, model_url, tmp, result)
        if not args.no_startup:
            _startup_section(args, default_k, model_url, tmp, result)
        if args.moves_19 > 0:
            _paper_section(cfg, args.moves_19, tmp, result)
        if not args.no_memory:
            search = args.memory_search or s.search
            _memory_section(cfg, args.memory_moves, search, args.memory_net, tmp, result)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
