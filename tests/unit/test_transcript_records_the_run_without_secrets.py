"""Every run writes a JSONL transcript in the user cache directory, with keys and tokens redacted."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixloop.events import Action, Done, Notice, Observation, Usage, Verdict
from fixloop.transcript import REDACTED, Transcript, read_transcript, redact


@pytest.fixture(autouse=True)
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_transcript_lives_in_the_cache_dir_and_records_events(cache_home: Path) -> None:
    transcript = Transcript.open("run42", {"root": "/project", "test_ids": ["tests/test_x.py::test_y"]})
    transcript.event(Action("c1", "read_file", {"path": "calc.py"}, step=1))
    transcript.event(Observation("c1", "read_file", "def add(a, b): ...", is_error=False, step=1))
    transcript.event(Verdict(False, ("tests/test_x.py: assertion changed at line 3",), attempt=1, step=2))
    transcript.event(Usage(10, 5, 10, 5, step=1))
    transcript.event(Notice("baseline: 1 failing", 0, kind="baseline"))
    transcript.write("result", status="fixed", files=["calc.py"])
    transcript.event(Done("fixed", "done", step=3, extra={"files": ["calc.py"]}))
    transcript.close()
    transcript.close()
    transcript.write("late", ignored=True)

    assert transcript.path.is_relative_to(cache_home / "fixloop" / "transcripts")
    assert transcript.path.name.endswith("-run42.jsonl")
    records = read_transcript(transcript.path)
    assert [record["type"] for record in records] == [
        "meta", "action", "observation", "verdict", "usage", "notice", "result", "done",
    ]  # fmt: skip
    assert records[0]["root"] == "/project" and records[0]["run_id"] == "run42"
    assert records[1] == {"t": records[1]["t"], "type": "action", "call_id": "c1", "tool": "read_file",
                          "arguments": {"path": "calc.py"}, "step": 1}  # fmt: skip
    assert records[5]["kind"] == "baseline"
    assert records[3]["reasons"] == ["tests/test_x.py: assertion changed at line 3"]
    assert all(isinstance(record["t"], float) for record in records)
    assert [record["t"] for record in records] == sorted(record["t"] for record in records)


def test_explicit_directory(tmp_path: Path) -> None:
    with Transcript.open("r/1", {}, directory=tmp_path / "elsewhere") as transcript:
        transcript.write("note", text="hi")
    assert transcript.path.parent == tmp_path / "elsewhere"
    assert "/" not in transcript.path.name.removesuffix(".jsonl").split("-", 2)[-1]


def test_every_record_is_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FIXLOOP_API_KEY", "local-key-0123456789")
    monkeypatch.setenv("HF_TOKEN", "tok-abcdefgh")
    with Transcript.open("r2", {"base_url": "http://x", "api_key": "local-key-0123456789"}) as transcript:
        transcript.event(
            Action("c", "write_file", {"content": "KEY = 'sk-abcdefghijklmnopqrstuvwx'"}, step=1)
        )
        transcript.event(Observation("c", "run_tests", "Authorization: Bearer abc.def.ghi", False, step=1))
        transcript.write("model_request", headers={"Authorization": "Bearer tok-abcdefgh"})
    text = transcript.path.read_text()
    for secret in ("local-key-0123456789", "sk-abcdefghijklmnopqrstuvwx", "abc.def.ghi", "tok-abcdefgh"):
        assert secret not in text
    assert REDACTED in text


def test_redact_patterns_and_what_it_leaves_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERVICE_PASSWORD", "correct-horse-battery")
    monkeypatch.setenv("SHORT_TOKEN", "1")
    assert redact("key=sk-proj-ABCDEFGHIJKLMNOP1234") == "key=sk-" + REDACTED
    assert redact("Authorization: Bearer eyJhbGciOi.J9x-y_z") == "Authorization: Bearer " + REDACTED
    assert redact("login with correct-horse-battery now") == f"login with {REDACTED} now"
    assert redact('api_key: "abcdef123456"') == f'api_key: "{REDACTED}"'
    assert redact("ghp_" + "a" * 36) == REDACTED
    ordinary = "assert add(1, 2) == 3  # token count 1, the key is the sum"
    assert redact(ordinary) == ordinary


def test_a_torn_last_line_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"t": 0.0, "type": "meta"}\n{"t": 0.1, "type": "act')
    assert read_transcript(path) == [{"t": 0.0, "type": "meta"}]
