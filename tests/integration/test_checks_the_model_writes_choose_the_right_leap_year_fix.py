"""On the bench's leap-year project the one-token round verifies more than one change; the checks the model
writes from the code and the failing test (1900 is no leap year, 2000 is) run on each, and the right rule is
proposed (the `!=` rule breaks none of the checks the old code passes either: it comes after, in the order
found), the others kept in the pool with the check each broke. The check file never reaches the user."""

from __future__ import annotations

import shutil
from pathlib import Path

from fixloop.config import load_settings
from fixloop.engine import FixRequest, FixRun
from fixloop.events import Notice

PROJECT = Path(__file__).resolve().parents[2] / "fixtures" / "bench" / "projects" / "billing_dates"
TARGETS = (
    "tests/test_schedule.py::test_month_end_renewal_in_a_leap_year",
    "tests/test_schedule.py::test_yearly_renewal_of_a_leap_day",
)
CHECKS = (
    "```python\nfrom billing.calendar import is_leap\n\n\n"
    "def test_1900_is_not_a_leap_year():\n    assert not is_leap(1900)\n\n\n"
    "def test_2000_is_a_leap_year():\n    assert is_leap(2000)\n\n\n"
    "def test_2024_is_a_leap_year():\n    assert is_leap(2024)\n```\n"
)
RIGHT = "+    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)"


async def test_the_fix_that_passes_the_written_checks_is_proposed(tmp_path, scripted_model):
    root = tmp_path / "billing_dates"
    shutil.copytree(PROJECT, root, ignore=shutil.ignore_patterns("case.json", "__pycache__"))
    server = scripted_model([{"content": "1"}, {"content": "1"}, {"content": CHECKS}])
    env = {"FIXLOOP_BASE_URL": server.base_url, "FIXLOOP_MODEL": "scripted", "FIXLOOP_API_KEY": "none"}
    overrides = {"testTimeout": 20, "strategy": "sample", "mutants": True, "poolSize": 3, "poolShare": 1}
    settings = load_settings(root, overrides, env=env)
    events: list = []
    run = FixRun(FixRequest(root, TARGETS), settings, events.append)
    result = await run.execute()
    notices = [event.text for event in events if isinstance(event, Notice)]

    assert result.status == "fixed", notices
    assert RIGHT in result.diff  # found second: without the checks the first found (`or` outside) came first
    assert result.summary.startswith("verified fix — a one-token change")  # the checks speak for it
    pool = result.to_json()["pool"]
    assert len(pool) == 3 and RIGHT in pool[0]["diff"]
    assert pool[0]["evidence"]["written_checks"] == {
        "written": 3,
        "kept_before": 1,  # only the 1900 check passes on the code before any fix: only it is weighed
        "telling_apart": 1,
        "passed": 1,
        "failed": [],
        "broke": [],
        "mended": ["test_2000_is_a_leap_year", "test_2024_is_a_leap_year"],  # recorded, not weighed
    }
    broke = sorted(entry["evidence"]["written_checks"]["broke"] for entry in pool[1:])
    assert broke == [[], ["test_1900_is_not_a_leap_year"]]  # `or` outside makes 1900 a leap year again
    assert "+    return year % 4 == 0 or (year" in pool[2]["diff"]  # and so it ranks last
    asked = server.requests[-1]["messages"][-1]["content"]
    assert "def is_leap(year: int) -> bool:" in asked and "def test_month_end_renewal_in_a_leap_year" in asked
    assert any(
        n.startswith("the model wrote checks for the pool's fixes:\n") and "is_leap(1900)" in n
        for n in notices
    )
    assert run.model_tally.requests == 3  # the judgment's two asks and the checks, counted like any request
    assert not list(root.rglob("test_fixloop_written_checks.py"))  # never in the user's project
    assert "test_fixloop_written_checks" not in result.diff
