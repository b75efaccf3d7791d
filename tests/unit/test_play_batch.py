"""`python -m minigo_core.bench play_batch`: a player's readouts a second by leaves a network batch, each row
a real search of the model's own positions; Gumbel's batches are the same search as one leaf at a time."""

from __future__ import annotations

import pytest

from minigo_core.bench import play_batch


def rows_of(text: str) -> dict[int, list[str]]:
    lines = text.splitlines()
    head = next(i for i, line in enumerate(lines) if line.split()[:3] == ["leaves", "a", "batch"])
    return {int(line.split()[0]): line.split() for line in lines[head + 1 :] if line.strip()}


def test_rows_by_batch_size_with_the_same_gumbel_search(ladders_model, capsys):
    argv = ["--model", ladders_model, "--config", "config.yaml", "--readouts", "24", "--positions", "3"]
    assert play_batch.main([*argv, "--parallel", "4,8"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("CPU: ") and "gumbel search" in out
    rows = rows_of(out)
    assert sorted(rows) == [1, 4, 8]  # one leaf a batch always runs: the rate's baseline
    assert rows[1][-1] == "1.00x"
    assert all(r[-1].endswith("x") and float(r[-1][:-1]) > 0 for r in rows.values())
    nodes = {k: float(r[3]) for k, r in rows.items()}
    assert len(set(nodes.values())) == 1 and nodes[1] > 1  # the same tree whatever the batch


@pytest.mark.parametrize("text", ["0", "a", "300", ""])
def test_bad_batch_sizes_are_refused(text, capsys):
    with pytest.raises(SystemExit):
        play_batch.main(["--model", "m", "--parallel", text])
    assert "--parallel" in capsys.readouterr().err
