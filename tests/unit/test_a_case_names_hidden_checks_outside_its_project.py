"""case.json's `hidden_checks` names a folder outside the case's project (relative to the case folder) whose
test_hidden_*.py files the judge adds after the visible tests pass, and `reference` the original text; a
folder inside the project, an absolute path, a symlink into the project, a file that would replace one of the
project's, or a reference outside it is refused naming the file and the field. No copy holds the checks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fixloop.bench.cases import CaseError, copy_case, place_hidden_checks, read_case
from support import write_project

BUGGY = "def is_leap(year):\n    return year % 4 == 0 and year % 100 != 0\n"
VISIBLE = "from calendar_rules import is_leap\n\n\ndef test_2000():\n    assert is_leap(2000)\n"
HIDDEN = "from calendar_rules import is_leap\n\n\ndef test_1900():\n    assert not is_leap(1900)\n"
REFERENCE = "    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)\n"


def make_case(folder: Path, **fields: object) -> Path:
    data = {"failing_test_ids": ["tests/test_calendar.py::test_2000"], **fields}
    project = folder / str(fields.get("project", "."))
    write_project(project, {"calendar_rules.py": BUGGY, "tests/test_calendar.py": VISIBLE})
    (folder / "case.json").write_text(json.dumps(data), encoding="utf-8")
    return folder


def hidden(folder: Path, files: dict[str, str] | None = None) -> Path:
    return write_project(folder, files or {"tests/test_hidden_calendar.py": HIDDEN})


def test_hidden_checks_beside_the_projects_are_read_with_their_test_files_and_the_reference(tmp_path: Path):
    hidden(
        tmp_path / "hidden" / "leap", {"tests/test_hidden_calendar.py": HIDDEN, "tests/data.txt": "1900\n"}
    )
    reference = {"path": "calendar_rules.py", "text": REFERENCE}
    case = read_case(
        make_case(tmp_path / "projects" / "leap", hidden_checks="../../hidden/leap", reference=reference)
    )
    assert case.hidden_checks == (tmp_path / "hidden" / "leap").resolve()
    assert case.hidden_tests == ("tests/test_hidden_calendar.py",)  # data files are placed, not run
    assert case.reference is not None and case.reference.path == "calendar_rules.py"
    assert case.reference.describe() == f"calendar_rules.py: {REFERENCE.strip()}"
    plain = read_case(make_case(tmp_path / "plain"))
    assert plain.hidden_checks is None and plain.hidden_tests == () and plain.reference is None


def test_no_copy_holds_the_hidden_checks_until_the_judge_places_them(tmp_path: Path):
    # the checks inside the case folder, beside its project folder: allowed, and left out of the copy
    folder = make_case(tmp_path / "leap", project="proj", hidden_checks="checks")
    hidden(folder / "checks")
    case = read_case(folder)
    root = copy_case(case, tmp_path / "copy" / "leap")
    copied = sorted(p.relative_to(tmp_path / "copy").as_posix() for p in (tmp_path / "copy").rglob("*"))
    assert root == tmp_path / "copy" / "leap" / "proj"
    assert not any("hidden" in path or "checks" in path or "case.json" in path for path in copied), copied
    assert not any("1900" in p.read_text() for p in (tmp_path / "copy").rglob("*.py"))
    place_hidden_checks(case, root)
    assert (root / "tests" / "test_hidden_calendar.py").read_text() == HIDDEN
    assert (root / "tests" / "test_calendar.py").read_text() == VISIBLE


@pytest.mark.parametrize(
    ("fields", "layout", "complaint"),
    [
        ({"hidden_checks": "hidden"}, "inside", "must lie outside the project folder"),
        ({"hidden_checks": "tests"}, "none", "must lie outside the project folder"),
        ({"hidden_checks": ".", "project": "proj"}, "none", "must lie outside the project folder"),
        ({"hidden_checks": "../sneaky"}, "symlink", "must lie outside the project folder"),
        ({"hidden_checks": "/tmp/hidden"}, "none", "must be a folder relative to the case folder"),
        ({"hidden_checks": ["../hidden"]}, "none", "must be a folder relative to the case folder"),
        ({"hidden_checks": "../nowhere"}, "none", "does not exist"),
        ({"hidden_checks": "../hidden"}, "no_tests", "holds no test_hidden_*.py file"),
        ({"hidden_checks": "../hidden"}, "clash", "would replace the project's own tests/test_calendar.py"),
        ({"reference": "return year % 400"}, "none", "reference must be"),
        ({"reference": {"path": "calendar_rules.py"}}, "none", "reference must be"),
        ({"reference": {"path": "../outside.py", "text": "x"}}, "none", "is not a file in the project"),
        ({"reference": {"path": "missing.py", "text": "x"}}, "none", "is not a file in the project"),
    ],
)
def test_hidden_checks_that_escape_or_clash_and_bad_references_are_refused(
    tmp_path: Path, fields: dict[str, object], layout: str, complaint: str
):
    folder = make_case(tmp_path / "case", **fields)
    if layout == "inside":
        hidden(folder / "hidden")
    elif layout == "symlink":  # a link beside the case that leads back into the project
        (tmp_path / "sneaky").symlink_to(folder / "tests", target_is_directory=True)
    elif layout == "no_tests":
        hidden(tmp_path / "hidden", {"tests/test_calendar_extra.py": HIDDEN})
    elif layout == "clash":
        hidden(
            tmp_path / "hidden", {"tests/test_hidden_calendar.py": HIDDEN, "tests/test_calendar.py": HIDDEN}
        )
    (tmp_path / "outside.py").write_text("x = 1\n")
    with pytest.raises(CaseError) as refused:
        read_case(folder)
    field = "reference" if "reference" in fields else "hidden_checks"
    assert str(folder / "case.json") in refused.value.message and field in refused.value.message
    assert complaint in refused.value.message
