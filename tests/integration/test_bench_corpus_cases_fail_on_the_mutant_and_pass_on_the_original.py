"""The corpus builder makes verified cases from a pinned sdist: each fails its ids, the original passes them;
a mutant's hidden test files leave its case for its hidden checks folder; the original line is its reference.

Builds a slice of the corpus (the first cachetools mutants: the fastest suite) with the real builder and
PyPI, then checks every built case independently of the builder, and that rebuilding keeps what is built
and repairs what was tampered with. `python fixtures/bench/build.py --out DIR` checks all of them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fixloop.bench.cases import find_cases
from support import project_python

BENCH_DIR = Path(__file__).resolve().parents[2] / "fixtures" / "bench"
sys.path.insert(0, str(BENCH_DIR))

from manifest import hidden_name, load_manifest  # noqa: E402
from suite import run_suite  # noqa: E402

LIBRARY = "cachetools"
SLICE = 6


def sliced() -> list:
    """The mutants this test builds."""
    _, mutants = load_manifest()
    return [m for m in mutants if m.library == LIBRARY][:SLICE]


def build(out: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(BENCH_DIR / "build.py"), "--out", str(out), "--cache", str(cache)]
    command += ["--python", project_python()]
    for mutant in sliced():
        command += ["--mutant", mutant.id]
    return subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, subprocess.CompletedProcess[str]]:
    """(the cases folder, the sdist cache, the first build) shared by this module's tests."""
    cache = tmp_path_factory.mktemp("sdists")
    out = tmp_path_factory.mktemp("cases")
    return out, cache, build(out, cache)


def test_builder_writes_one_verified_case_per_mutant(built) -> None:
    out, _, first = built
    assert first.returncode == 0, first.stderr
    expected = {m.id for m in sliced()}
    assert {p.name for p in out.iterdir() if (p / "case.json").is_file()} == expected
    for mutant in sliced():
        case = json.loads((out / mutant.id / "case.json").read_text(encoding="utf-8"))
        assert case["failing_test_ids"] and case["bug_files"] and case["source"]["library"] == LIBRARY
        assert (out / mutant.id / "pytest.ini").is_file()
        assert case["reference"] == {"path": mutant.file, "text": mutant.reference_text()}


def test_hidden_tests_leave_the_case_for_its_hidden_checks_folder(built) -> None:
    out, _, first = built
    assert first.returncode == 0, first.stderr
    hidden = [m for m in sliced() if m.hidden_tests]
    assert hidden, "the slice holds a mutant with hidden tests"
    for mutant in hidden:
        case = json.loads((out / mutant.id / "case.json").read_text(encoding="utf-8"))
        folder = (out / mutant.id / case["hidden_checks"]).resolve()
        assert folder == (out / ".hidden" / mutant.id).resolve()
        assert case["failing_test_ids"] == list(mutant.visible_failing_ids())
        for test_file in mutant.hidden_tests:
            assert not (out / mutant.id / test_file).exists()
            assert (folder / hidden_name(test_file)).is_file()
    names = [case.name for case in find_cases([out])]  # the hidden folders are never cases
    assert sorted(names) == sorted(m.id for m in sliced())


def test_each_case_fails_its_ids_and_passes_them_once_the_mutation_is_undone(built) -> None:
    out, _, first = built
    assert first.returncode == 0, first.stderr
    for mutant in sliced():
        root = out / mutant.id
        on_mutant = run_suite(root, project_python())
        assert on_mutant.failing == set(mutant.visible_failing_ids()), (mutant.id, on_mutant.tail)
        source = root / mutant.file
        text = source.read_text(encoding="utf-8")
        source.write_text(text.replace(mutant.mutant, mutant.original, 1), encoding="utf-8")
        try:
            on_original = run_suite(root, project_python())
        finally:
            source.write_text(text, encoding="utf-8")
        assert not on_original.failing, (mutant.id, on_original.tail)
        assert set(mutant.visible_failing_ids()) <= {
            n for n, o in on_original.outcomes.items() if o == "passed"
        }


def test_rebuilding_keeps_built_cases_and_repairs_a_tampered_one(built) -> None:
    out, cache, first = built
    assert first.returncode == 0, first.stderr
    victim = sliced()[0]
    (out / victim.id / victim.file).write_text("# tampered\n", encoding="utf-8")

    again = build(out, cache)

    assert again.returncode == 0, again.stderr
    what = {line.split()[1]: line.split()[0] for line in again.stdout.splitlines() if line[:1].islower()}
    assert what.pop(victim.id) == "built"
    assert set(what.values()) == {"kept"} and len(what) == SLICE - 1
    assert victim.mutant in (out / victim.id / victim.file).read_text(encoding="utf-8")
