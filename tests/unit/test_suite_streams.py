"""`python -m tools.suite` (what `make test` runs): the suite's streams run every test folder once, side by
side, and the suite fails when any stream fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools import suite

REPO = Path(__file__).resolve().parents[2]


def covered(folder: str) -> list[str]:
    """The streams whose pytest arguments run the tests of `folder` (tests/X)."""
    names = []
    for name, args in suite.STREAMS.items():
        ignored = {a.split("=", 1)[1] for a in args if a.startswith("--ignore=")}
        paths = [a for a in args if not a.startswith("-")]
        if any(folder == p or folder.startswith(p + "/") for p in paths) and folder not in ignored:
            names.append(name)
    return names


def test_every_test_folder_runs_in_exactly_one_stream():
    folders = sorted(str(p.parent.relative_to(REPO)) for p in (REPO / "tests").glob("*/test_*.py"))
    assert folders, "no test folders found"
    for folder in dict.fromkeys(folders):
        assert len(covered(folder)) == 1, f"{folder} runs in the streams {covered(folder)} (once, please)"
    assert covered("tests/cluster") == ["cluster"]


@pytest.mark.parametrize("serial", [False, True])
def test_a_failing_stream_fails_the_suite_and_both_are_shown(tmp_path, monkeypatch, capfd, serial):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "test_ok.py").write_text("def test_ok():\n    assert True\n")
    (tmp_path / "b" / "test_bad.py").write_text("def test_bad():\n    assert 1 == 2\n")
    monkeypatch.setattr(suite, "REPO", tmp_path)
    monkeypatch.setattr(suite, "STREAMS", {"cluster": ["b"], "rest": ["a"]})
    assert suite.main(["-p", "no:cacheprovider", *(["--serial"] if serial else [])]) == 1
    out = capfd.readouterr().out
    assert "1 passed" in out and "1 failed" in out and "test_bad" in out
    assert "stream cluster: exit 1" in out and "stream rest: exit 0" in out
    assert ("one after another" if serial else "side by side") in out


def test_passing_streams_pass(tmp_path, monkeypatch, capfd):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "test_ok.py").write_text("def test_ok():\n    assert True\n")
    monkeypatch.setattr(suite, "REPO", tmp_path)
    monkeypatch.setattr(suite, "STREAMS", {"cluster": ["a"], "rest": ["a"]})
    assert suite.main(["-p", "no:cacheprovider"]) == 0
    assert capfd.readouterr().out.count("1 passed") == 2


def test_each_stream_s_time_is_its_own(tmp_path, monkeypatch, capfd):
    """A stream that ends first is timed to its end, not to the other's."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "test_ok.py").write_text("def test_ok():\n    assert True\n")
    (tmp_path / "b" / "test_slow.py").write_text("import time\n\ndef test_slow():\n    time.sleep(4)\n")
    monkeypatch.setattr(suite, "REPO", tmp_path)
    monkeypatch.setattr(suite, "STREAMS", {"cluster": ["b"], "rest": ["a"]})
    seconds = {}
    real_summary = suite.summary
    monkeypatch.setattr(suite, "summary", lambda streams: seconds.update({s.name: s.seconds for s in streams})
                        or real_summary(streams))  # fmt: skip
    assert suite.main(["-p", "no:cacheprovider"]) == 0
    assert seconds["cluster"] - seconds["rest"] > 2.0
