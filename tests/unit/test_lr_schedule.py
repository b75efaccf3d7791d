"""`train.learning_rate_unit`: the learning-rate schedule by global step (`step`, every shipped config) or by
the run's progress (`run_fraction`: generation g of `generations` trains at (g - 1) / generations, one rate
for the whole generation), its validation, and a real training job that records the rate and reruns to the
same bytes."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import yaml

from minigo_core.base import config
from minigo_core.data import layout
from minigo_core.nn import modelfile, train_job

REPO = Path(__file__).resolve().parents[2]
BOARD = 5
LATER = [[0, 0.03], [0.5, 0.01], [0.8, 0.003]]  # config/ablation/value.yaml's row vmix-lr-fraction


def _by_fraction(schedule, generations: int = 10) -> config.RunConfig:
    return config.from_dict(
        {
            "generations": generations,
            "train": {"learning_rate_unit": "run_fraction", "learning_rate": schedule},
        }
    )


def test_run_fraction_gives_one_rate_a_generation_by_its_place_in_the_run():
    cfg = _by_fraction(LATER)  # 10 generations: g trains at (g - 1) / 10
    assert config.run_fraction(cfg, 1) == 0.0
    rates = {g: config.learning_rate_for(cfg, g, global_step=0) for g in range(1, 11)}
    assert rates[1] == 0.03  # the first generation: fraction 0, the first rate
    assert (rates[5], rates[6]) == (0.03, 0.01)  # 0.4, then the boundary 0.5 itself takes the new rate
    assert (rates[8], rates[9]) == (0.01, 0.003)  # 0.7, then the boundary 0.8
    assert rates[10] == 0.003  # the last generation, 0.9
    # the global step plays no part: every step of a generation has its rate
    assert all(config.learning_rate_for(cfg, 6, s) == 0.01 for s in (0, 5000, 10**6))
    assert config.learning_rate_for(cfg, 40, 0) == 0.003  # past `generations`: the last rate
    # the same boundaries over 36 generations (the value ablation's rows) drop at generations 19 and 30
    long = _by_fraction(LATER, generations=36)
    drops = [
        g
        for g in range(2, 37)
        if config.learning_rate_for(long, g, 0) != config.learning_rate_for(long, g - 1, 0)
    ]
    assert drops == [19, 30]


def test_the_step_unit_is_the_global_step_schedule_it_was():
    cfg = config.from_dict({})
    assert cfg.train.learning_rate_unit == "step"
    for step in (0, 4999, 5000, 9999, 10000, 10**6):
        for generation in (1, 24, 48):
            assert config.learning_rate_for(cfg, generation, step) == config.learning_rate_at(
                cfg.train.learning_rate, step
            )
    assert [config.learning_rate_for(cfg, 1, s) for s in (4999, 5000, 10000)] == [0.03, 0.01, 0.003]


@pytest.mark.parametrize(
    "path",
    [REPO / "config.yaml", *sorted((REPO / "config").glob("*.yaml")),
     *sorted((REPO / "config" / "ablation").glob("base-*.yaml"))],
    ids=lambda p: str(p.relative_to(REPO)),
)  # fmt: skip
def test_every_shipped_config_and_base_keeps_the_step_schedule(path):
    data = yaml.safe_load(path.read_text())
    assert data["train"]["learning_rate_unit"] == "step"  # stated, with the value that keeps the behaviour


BAD = [
    ([[0.1, 0.03]], "must be 0"),  # not from the run's start
    ([[0, 0.03], [0.5, 0.01], [0.5, 0.003]], "above 0.5 and below 1"),  # not strictly rising
    ([[0, 0.03], [0.6, 0.01], [0.4, 0.003]], "above 0.6"),
    ([[0, 0.03], [1, 0.01]], "below 1"),  # the whole run is fraction 1: a boundary there never applies
    ([[0, 0.03], [5000, 0.01], [10000, 0.003]], "fraction (generation - 1) / generations"),  # global steps
    ([[0, 0.03], [True, 0.01]], "run fraction must be"),
    ([[0, 0.03], ["half", 0.01]], "run fraction must be"),
    ([[0, -0.01]], "learning rate must be in (0, 10)"),
    ([[0, 0.03], [0.5, 0]], "learning rate must be in (0, 10)"),
    ([[0, 0.03], [0.5]], "pair"),
    ([], "at least one"),
]


@pytest.mark.parametrize(("schedule", "words"), BAD, ids=[repr(s) for s, _ in BAD])
def test_a_bad_run_fraction_schedule_is_rejected_naming_the_key(schedule, words):
    with pytest.raises(config.ConfigError) as info:
        _by_fraction(schedule)
    message = str(info.value)
    assert "train.learning_rate" in message and words in message


def test_the_errors_say_what_to_write_and_the_unit_is_checked():
    with pytest.raises(config.ConfigError) as info:
        _by_fraction([[0, 0.03], [5000, 0.01]])
    message = str(info.value)  # what a step schedule under the new unit is told: both ways out
    assert "train.learning_rate[1]" in message and "[[0, 0.03], [0.5, 0.01], [0.8, 0.003]]" in message
    assert "train.learning_rate_unit: step" in message
    with pytest.raises(config.ConfigError, match=r"train\.learning_rate\[1\]' step must be an integer"):
        config.from_dict({"train": {"learning_rate": LATER}})  # fractions under the step unit
    for bad in ("steps", "fraction", ""):
        with pytest.raises(config.ConfigError, match="train.learning_rate_unit"):
            config.from_dict({"train": {"learning_rate_unit": bad}})


def test_the_schema_takes_the_key_and_fractional_boundaries():
    jsonschema = pytest.importorskip("jsonschema")
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    data = yaml.safe_load((REPO / "config.yaml").read_text())
    data["train"].update(learning_rate_unit="run_fraction", learning_rate=LATER)
    jsonschema.Draft202012Validator(schema).validate(data)
    data["train"]["learning_rate_unit"] = "epoch"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schema).validate(data)


# ---- a training job on a 5x5 window ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def setup(tmp_path_factory, training_inputs) -> dict:
    run = {
        "board_size": BOARD,
        "seed": 5,
        "generations": 4,  # generation 2 trains at 1/4 of the run
        "model": {"blocks": 1, "filters": 8, "fc_width": 16, "backend": "torch"},
        "window": {"generations": 2, "sample_fraction": 1.0},
        "train": {"batch_per_rank": 16, "backend": "torch", "prefetch_batches": 2, "replay_ratio": None,
                  "learning_rate_unit": "run_fraction",
                  "learning_rate": [[0, 0.05], [0.25, 0.02], [0.5, 0.01]]},
    }  # fmt: skip
    # a parent far along in global steps: a step schedule would be at its last rate, by fraction it is not
    return training_inputs(tmp_path_factory.mktemp("lr"), run, generation=2, recorded_fraction=0.9,
                           provenance={"global_step": 50_000})  # fmt: skip


def _train(setup: dict, name: str, cfg: config.RunConfig | None = None) -> tuple[Path, list[dict]]:
    """Train generation 2 into `name`: the model file and the records of its metrics.jsonl."""
    out, work = setup["base"] / f"{name}.safetensors", setup["base"] / f"work-{name}"
    job = train_job.TrainJob(cfg=cfg or setup["cfg"], generation=2, window_dir=setup["window"],
                             parent=setup["parent"], out=str(out), work_dir=str(work), quiet=True,
                             record_wall_time=False, log_every=1)  # fmt: skip
    train_job.train(job)
    lines = (work / layout.METRICS).read_text().splitlines()
    return out, [json.loads(line) for line in lines]


@pytest.fixture(scope="module")
def fraction_run(setup) -> tuple[Path, list[dict]]:
    return _train(setup, "fraction")


def test_a_training_job_records_the_run_fraction_rate_and_reruns_to_the_same_bytes(setup, fraction_run):
    out, records = fraction_run
    start = records[0]
    assert start["event"] == "start" and start["learning_rate_unit"] == "run_fraction"
    assert start["lr"] == 0.02  # generation 2 of 4: fraction 0.25, the boundary's rate
    steps = [r for r in records if r["event"] == "step"]
    assert len(steps) >= 2 and {r["lr"] for r in steps} == {0.02}  # one rate for the whole generation
    assert steps[0]["global_step"] == 50_001  # the global step goes on; it does not set the rate here
    assert modelfile.read(str(out)).provenance["learning_rate_final"] == 0.02
    again, _ = _train(setup, "fraction-again")
    assert again.read_bytes() == out.read_bytes()


def test_the_rate_follows_the_run_length_and_the_step_unit_records_its_own(setup, fraction_run):
    cfg = setup["cfg"]
    longer = dataclasses.replace(cfg, generations=8)  # generation 2 of 8: fraction 1/8, before the drop
    out, records = _train(setup, "longer", longer)
    assert records[0]["lr"] == 0.05 and {r["lr"] for r in records if r["event"] == "step"} == {0.05}
    assert out.read_bytes() != fraction_run[0].read_bytes()
    by_step = dataclasses.replace(cfg, train=dataclasses.replace(
        cfg.train, learning_rate_unit="step", learning_rate=((0, 0.05), (50_002, 0.02))))  # fmt: skip
    _, records = _train(setup, "step", by_step)
    assert (records[0]["learning_rate_unit"], records[0]["lr"]) == ("step", 0.05)  # the first step's
    assert [r["lr"] for r in records if r["event"] == "step"][:4] == [0.05, 0.05, 0.02, 0.02]
