"""The adversarial suite's ledger (tests/security_ledger.py): rows gathered from every worker are summed
per category and in total, a bad outcome gets its own column, and the confinement row names its tools."""

from __future__ import annotations

import json

import security_ledger


def rows() -> list[dict[str, str]]:
    add = [
        ("confinement", "read_file", "dotdot", "refused"),
        ("confinement", "write_file", "symlink", "refused"),
        ("confinement", "run_tests", "option", "escape"),
        ("tamper", "gate", "edit test", "rejected"),
    ]
    return [{"category": c, "tool": t, "label": label, "outcome": o, "detail": ""} for c, t, label, o in add]


def test_attempts_and_outcomes_are_summed_per_category_and_in_total() -> None:
    lines = security_ledger.table(rows())
    header = ["attempts", "refused", "contained", "rejected", "one line", *security_ledger.BAD]
    cells = {row.split()[0]: dict(zip(header, map(int, row.split()[1:]), strict=True)) for row in lines[1:4]}

    assert lines[0].split()[:2] == ["attempts", "refused"] and "accepted tamper" in lines[0]
    assert cells["confinement"]["attempts"] == 3 and cells["confinement"]["refused"] == 2
    assert cells["confinement"]["escape"] == 1
    assert cells["tamper"] == {**dict.fromkeys(header, 0), "attempts": 1, "rejected": 1}
    assert cells["total"]["attempts"] == 4 and cells["total"]["escape"] == 1
    assert lines[-1] == "confinement attempts cover: read_file, run_tests, write_file"
    assert security_ledger.table([]) == []


def test_the_ledger_is_written_as_json_lines_where_the_environment_names_a_file(tmp_path, monkeypatch):
    path = tmp_path / "ledger.jsonl"
    monkeypatch.setenv("FIXLOOP_SECURITY_LEDGER", str(path))
    monkeypatch.setattr(security_ledger, "ROWS", rows())

    security_ledger.write()

    assert [json.loads(line)["tool"] for line in path.read_text().splitlines()] == [
        "read_file", "write_file", "run_tests", "gate"
    ]  # fmt: skip
