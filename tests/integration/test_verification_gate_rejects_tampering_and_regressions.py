"""The gate accepts a fix only when it is proven: targets pass, nothing regressed, no test weakened."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from fixloop.errors import NothingToFix, TestRunError
from fixloop.events import Observation
from fixloop.pytest_runner import PytestRunner
from fixloop.shadow import ShadowWorkspace, shadows_dir
from fixloop.verify import Baseline, VerificationGate, proposal_changes, record_baseline
from support import apply_edits, load_fix, project_python, repo_snapshot

CATALOG_TARGET = "tests/test_catalog.py::test_search_ignores_case_of_query"
INVOICE_TARGET = "tests/test_invoice.py::test_invoice_line"


def write(root: Path, rel: str, old: str, new: str) -> None:
    apply_edits(root, [{"path": rel, "old_text": old, "new_text": new}])


class Checked:
    """A shadow of a fixture project with its baseline, ready to be 'fixed' and checked."""

    def __init__(self, shadow: ShadowWorkspace, runner: PytestRunner, baseline: Baseline) -> None:
        self.shadow, self.runner, self.baseline = shadow, runner, baseline
        self.root = shadow.root

    def gate(self, allow_test_edits: bool = False) -> VerificationGate:
        return VerificationGate(self.shadow, self.runner, self.baseline, allow_test_edits=allow_test_edits)


@pytest.fixture
async def checked(fixture_project: Callable[..., Path]) -> AsyncIterator[Callable[..., object]]:
    shadows: list[ShadowWorkspace] = []

    async def make(name: str, targets: list[str], timeout: float = 30) -> Checked:
        shadow = await asyncio.to_thread(ShadowWorkspace.create, fixture_project(name))
        shadows.append(shadow)
        runner = PytestRunner(shadow.root, (project_python(), "-m", "pytest"), timeout)
        return Checked(shadow, runner, await record_baseline(runner, targets))

    yield make
    for shadow in shadows:
        shadow.close()


async def test_honest_fix_is_accepted_and_the_users_repo_is_untouched(checked, fixture_project) -> None:
    project = await checked("careless_fix", [INVOICE_TARGET])
    before = repo_snapshot(project.shadow.original)
    assert "tests/test_money.py" in project.baseline.run_ids()  # imports code the target reaches
    assert "tests/test_money.py::test_format_money_from_cents" in project.baseline.passing
    assert INVOICE_TARGET not in project.baseline.passing
    apply_edits(project.root, load_fix("careless_fix")["edits"])
    verdict = await project.gate().check()
    assert verdict.accepted, verdict.reasons
    assert verdict.reasons == ()
    assert [change.path for change in proposal_changes(project.shadow.changes())] == ["billing/invoice.py"]
    assert repo_snapshot(project.shadow.original) == before


async def test_fix_that_breaks_an_unrelated_passing_test_is_rejected_by_id(checked) -> None:
    project = await checked("careless_fix", [INVOICE_TARGET])
    apply_edits(project.root, load_fix("careless_fix")["careless_edits"])
    for allow in (False, True):
        verdict = await project.gate(allow_test_edits=allow).check()
        assert not verdict.accepted
        assert verdict.newly_failing == ("tests/test_money.py::test_format_money_from_cents",)
        assert verdict.still_failing == ()
        (reason,) = verdict.reasons
        assert reason.startswith(
            "tests/test_money.py::test_format_money_from_cents passed before this change"
        )
        assert reason.endswith("the fix must keep it passing")


async def test_edited_assertion_is_rejected_and_accepted_with_allow_test_edits(checked) -> None:
    project = await checked("conftest_fixture", [CATALOG_TARGET])
    write(project.root, "tests/test_catalog.py", 'search("EMMA")', 'search("emma")')
    verdict = await project.gate().check()
    assert not verdict.accepted
    assert verdict.reasons == (
        "tests/test_catalog.py: assertion changed at line 6 — fix the code under test, not the test",
    )
    allowed = await project.gate(allow_test_edits=True).check()
    assert allowed.accepted, allowed.reasons


async def test_added_skip_marker_is_rejected_and_a_skipped_target_never_counts_as_fixed(checked) -> None:
    project = await checked("conftest_fixture", [CATALOG_TARGET])
    write(
        project.root,
        "tests/test_catalog.py",
        "def test_search_ignores_case_of_query",
        "import pytest\n\n\n@pytest.mark.skip(reason='flaky')\ndef test_search_ignores_case_of_query",
    )
    verdict = await project.gate().check()
    assert not verdict.accepted
    assert any("skip/xfail added at line 8" in reason for reason in verdict.reasons)
    allowed = await project.gate(allow_test_edits=True).check()
    assert not allowed.accepted  # the tamper guard is off, but the target must still really pass
    assert allowed.still_failing == (CATALOG_TARGET,)
    (reason,) = allowed.reasons
    assert reason.startswith(f"{CATALOG_TARGET} still is skipped") and reason.endswith("flaky")


async def test_conftest_edit_is_rejected_and_accepted_with_allow_test_edits(checked) -> None:
    project = await checked("conftest_fixture", [CATALOG_TARGET])
    write(
        project.root,
        "tests/conftest.py",
        "    return shelf\n",
        "    shelf.search = lambda q: [b for b in shelf.books if q.lower() in b.title.lower()]\n"
        "    return shelf\n",
    )
    verdict = await project.gate().check()
    assert not verdict.accepted
    assert verdict.reasons == (
        "tests/conftest.py: conftest.py changed at line 13 — fixtures and hooks are part of the tests; "
        "fix the code under test, not the test",
    )
    allowed = await project.gate(allow_test_edits=True).check()
    assert allowed.accepted, allowed.reasons


async def test_a_fix_that_still_hangs_is_rejected_for_the_timeout(checked) -> None:
    project = await checked("hangs", ["tests/test_bisect_search.py::test_finds_last_item"], timeout=4)
    assert project.baseline.run.timed_out  # the target hangs: the baseline still records what passed
    assert {
        "tests/test_bisect_search.py::test_finds_middle_item",
        "tests/test_bisect_search.py::test_absent_small_target",
        "tests/test_bisect_search.py::test_empty_list",
    } <= project.baseline.passing
    write(project.root, "lookup/bisect_search.py", "    lo, hi = 0,", "    # searching\n    lo, hi = 0,")
    verdict = await project.gate().check()
    assert not verdict.accepted
    (reason,) = verdict.reasons
    assert reason.startswith("the test run timed out after 4s while running tests/test_bisect_search.py::")
    apply_edits(project.root, load_fix("hangs")["edits"])
    assert (await project.gate().check()).accepted


async def test_no_change_and_cheating_code_are_rejected(checked) -> None:
    project = await checked("conftest_fixture", [CATALOG_TARGET])
    untouched = await project.gate().check()
    assert untouched.reasons == ("nothing was changed: edit the code under test, then submit",)
    assert untouched.unchanged  # nothing was judged: the loop spends no attempt on it
    (project.root / "debug_search.py").write_text("print('debugging')\n")
    only_new = await project.gate().check()
    assert only_new.reasons == (
        "only new files that nothing imports were added (debug_search.py): edit the code under test",
    )
    assert not only_new.unchanged
    write(
        project.root,
        "library/catalog.py",
        "        return [book for book in self.books if query in",
        "        import pytest\n        pytest.skip('no')\n"
        "        return [book for book in self.books if query in",
    )
    verdict = await project.gate().check()
    assert verdict.reasons == (
        "library/catalog.py: line 18 makes tests skip or exit instead of passing — "
        "fix the behaviour the test checks",
    )


async def test_baseline_says_nothing_to_fix_and_rejects_unknown_ids(fixture_project) -> None:
    root = fixture_project("conftest_fixture")
    apply_edits(root, load_fix("conftest_fixture")["edits"])
    with ShadowWorkspace.create(root) as shadow:
        runner = PytestRunner(shadow.root, (project_python(), "-m", "pytest"), 30)
        with pytest.raises(
            NothingToFix, match=r"test_search_ignores_case_of_query already passes: nothing to fix"
        ):
            await record_baseline(runner, [CATALOG_TARGET])
        with pytest.raises(TestRunError, match="test_nope"):
            await record_baseline(runner, ["tests/test_catalog.py::test_nope"])
    assert list(shadows_dir().iterdir()) == []


# -- through the engine: the rejection is fed back and the run ends not_fixed after `attempts` ---------


def tamper_script(attempts: int) -> list[dict]:
    edit = {"path": "tests/test_catalog.py", "old_text": 'search("EMMA")', "new_text": 'search("emma")'}
    turns: list[dict] = [
        {"content": "Make the test match.", "tool_calls": [{"name": "edit_file", "arguments": edit}]}
    ]
    for attempt in range(attempts):
        summary = {"summary": f"adjusted the test (try {attempt + 1})"}
        turns.append({"content": "Done.", "tool_calls": [{"name": "submit", "arguments": summary}]})
    return turns


async def test_engine_feeds_rejections_back_and_ends_not_fixed(run_fix, fixture_project) -> None:
    # The engine's edit tools already refuse test files, so the model's way to cheat is a careless fix.
    root = fixture_project("careless_fix")
    before = repo_snapshot(root)
    careless = load_fix("careless_fix")["careless_edits"]
    script = [
        {"content": "Change the formatter.", "tool_calls": [{"name": "edit_file", "arguments": careless[0]}]},
        {"content": "Done.", "tool_calls": [{"name": "submit", "arguments": {"summary": "try 1"}}]},
        {"content": "Again.", "tool_calls": [{"name": "submit", "arguments": {"summary": "try 2"}}]},
    ]
    outcome = await run_fix(root, script, test_ids=[INVOICE_TARGET], attempts=2)
    assert outcome.result.status == "not_fixed"
    assert outcome.result.attempts == 2
    newly = "tests/test_money.py::test_format_money_from_cents passed before this change"
    assert any(reason.startswith(newly) for reason in outcome.result.reasons)
    fed_back = [event.text for event in outcome.of(Observation) if event.tool == "submit"]
    assert len(fed_back) == 2 and all(newly in text for text in fed_back)
    assert outcome.result.diff == ""
    assert repo_snapshot(root) == before
    assert list(shadows_dir().iterdir()) == []


async def test_engine_accepts_the_same_fix_with_allow_test_edits(run_fix, fixture_project) -> None:
    root = fixture_project("conftest_fixture")
    before = repo_snapshot(root)
    outcome = await run_fix(root, tamper_script(1), test_ids=[CATALOG_TARGET], allowTestEdits=True)
    assert outcome.result.status == "fixed", outcome.result.reasons
    assert outcome.result.files == ["tests/test_catalog.py"]
    assert repo_snapshot(root) == before
