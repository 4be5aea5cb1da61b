"""The bench corpus manifest meets the corpus rules: libraries, bugs, kinds, cross-module cases, subsets."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parents[2] / "fixtures" / "bench"
sys.path.insert(0, str(BENCH_DIR))

import pytest  # noqa: E402
from manifest import (  # noqa: E402
    KINDS,
    ManifestError,
    Mutant,
    changed_lines,
    check_hidden_tests,
    fails_outside_the_buggy_module,
    hidden_name,
    load_manifest,
)


def own_projects() -> list[str]:
    return sorted(p.name for p in (BENCH_DIR / "projects").iterdir() if (p / "case.json").is_file())


def subset(name: str) -> list[str]:
    lines = (BENCH_DIR / "subsets" / f"{name}.txt").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def test_at_least_forty_one_line_bugs_in_at_least_four_pinned_libraries() -> None:
    libraries, mutants = load_manifest()
    assert len(mutants) >= 40
    assert len({m.library for m in mutants}) >= 4
    for library in libraries.values():
        assert len(library.sha256) == 64 and library.sdist.endswith((".tar.gz", ".zip")), library.name
    for mutant in mutants:
        assert changed_lines(mutant.original, mutant.mutant) == 1, mutant.id
        assert 1 <= len(mutant.failing_test_ids) <= 5, mutant.id


def test_every_bug_kind_is_present_and_a_third_fail_in_another_module() -> None:
    libraries, mutants = load_manifest()
    kinds = Counter(m.kind for m in mutants)
    assert set(kinds) == set(KINDS), kinds
    cross = [m for m in mutants if m.cross_module]
    assert 3 * len(cross) >= len(mutants)
    for mutant in mutants:
        outside = fails_outside_the_buggy_module(libraries[mutant.library], mutant)
        assert outside == mutant.cross_module, mutant.id


def test_own_projects_have_a_case_and_a_known_fix_kept_outside() -> None:
    names = own_projects()
    assert len(names) >= 10
    for name in names:
        case = json.loads((BENCH_DIR / "projects" / name / "case.json").read_text(encoding="utf-8"))
        fix = json.loads((BENCH_DIR / "fixes" / f"{name}.json").read_text(encoding="utf-8"))
        assert case["failing_test_ids"] == fix["test_ids"] and case["kind"] in KINDS, name
        assert fix["edits"] and fix["passing"], name
        assert not set(fix["passing"]) & set(fix["test_ids"]), name


def test_small_model_subset_names_existing_cases_of_both_origins() -> None:
    _, mutants = load_manifest()
    names = subset("small-model")
    own, generated = set(own_projects()), {m.id for m in mutants}
    assert len(names) >= 20 and len(set(names)) == len(names)
    assert set(names) <= own | generated, set(names) - own - generated
    assert set(names) & own and set(names) & generated


def test_hidden_tests_keep_a_failing_id_visible_and_each_fails_on_the_mutant_or_a_named_wrong_fix() -> None:
    _, mutants = load_manifest()
    hidden = [m for m in mutants if m.hidden_tests]
    assert hidden, "some library mutants keep hidden checks"
    for mutant in hidden:
        assert mutant.visible_failing_ids(), mutant.id
        fails_on_mutant = len(mutant.visible_failing_ids()) < len(mutant.failing_test_ids)
        assert fails_on_mutant or mutant.wrong_fixes or mutant.hidden_written, mutant.id
        assert mutant.reference_text() and mutant.reference_text() in mutant.original, mutant.id
    written = {m.id: set(m.hidden_written) for m in mutants if m.hidden_written}
    folders = {p.name: p for p in (BENCH_DIR / "hidden_library").iterdir() if p.is_dir()}
    assert set(folders) == set(written), "hidden_library/ holds a folder per mutant with hidden_written"
    for name, folder in folders.items():
        assert {f.relative_to(folder).as_posix() for f in folder.rglob("*.py")} == written[name], name
    assert hidden_name("tests/test_cachedmethod.py") == "tests/test_hidden_cachedmethod.py"
    base = Mutant(
        "lib-x", "lib", "lib/x.py", "operator", False, "", "a < b", "a <= b", ("tests/test_x.py::t",)
    )
    assert base.reference_text() == "a < b"
    for broken, complaint in (
        ({"hidden_tests": ("tests/test_x.py",)}, "keep one visible"),
        ({"hidden_tests": ("tests/test_y.py",)}, "name a wrong_fix"),
        ({"hidden_tests": ("tests/helpers.py",)}, "not a library test module"),
        ({"hidden_written": ("tests/test_x.py",)}, "not a test_hidden_"),
        ({"hidden_written": ("tests/test_hidden_x.py",)}, "is not in hidden_library/lib-x/"),
    ):
        with pytest.raises(ManifestError, match=complaint):
            check_hidden_tests(Mutant(**{**base.__dict__, **broken}), base.id)


def test_own_projects_have_hidden_checks_and_well_formed_wrong_fixes() -> None:
    names = own_projects()
    for name in names:
        case = json.loads((BENCH_DIR / "projects" / name / "case.json").read_text(encoding="utf-8"))
        assert case["hidden_checks"] == f"../../hidden/{name}", name
        assert list((BENCH_DIR / "hidden" / name).rglob("test_hidden_*.py")), name
        assert case["reference"]["path"] in case["bug_files"], name
    for path in sorted((BENCH_DIR / "wrong_fixes").glob("*.json")):
        assert path.stem in names, path.name
        wrong = json.loads(path.read_text(encoding="utf-8"))["wrong_fixes"]
        assert wrong and len({fix["name"] for fix in wrong}) == len(wrong), path.name
        for fix in wrong:
            assert fix["why"] and fix["edits"], (path.stem, fix["name"])
            for edit in fix["edits"]:
                source = (BENCH_DIR / "projects" / path.stem / edit["path"]).read_text(encoding="utf-8")
                assert source.count(edit["old_text"]) == 1, fix["name"]
                assert edit["new_text"] != edit["old_text"], fix["name"]


def test_thin_tests_subset_names_own_projects_each_with_a_wrong_fix() -> None:
    names = subset("thin-tests")
    assert len(names) >= 10 and len(set(names)) == len(names)
    assert set(names) <= set(own_projects()), set(names) - set(own_projects())
    for name in names:
        wrong_fixes = BENCH_DIR / "wrong_fixes" / f"{name}.json"
        assert json.loads(wrong_fixes.read_text(encoding="utf-8"))["wrong_fixes"], name
