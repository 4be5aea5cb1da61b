"""scripts/test.sh's plumbing: `--suite-part` splits the suite into the main part and the real-editor and
real-model tests apart; suite_total.py sums both parts into one closing line and one exit code; a build
asked for by several workers at once is made once, and a keyed build is kept for the next run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from built_once import CACHE_ENV, built_once

REPO = Path(__file__).resolve().parents[2]
E2E_FILE = "tests/e2e/test_neovim.py"
UNIT_FILE = "tests/unit/test_the_suite_runs_in_two_parts_and_sums_them_up.py"


def collected(*args: str) -> list[str]:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:xdist",
            *args,
            E2E_FILE,
            UNIT_FILE,
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return [line.split("::")[0] for line in done.stdout.splitlines() if "::" in line]


def test_the_parts_split_the_editors_tests_from_the_rest():
    main, apart, whole = collected("--suite-part", "main"), collected("--suite-part", "apart"), collected()
    assert set(main) == {UNIT_FILE} and set(apart) == {E2E_FILE}
    assert sorted(main + apart) == sorted(whole)


def test_each_part_writes_its_own_junit_report(tmp_path: Path):
    for part in ("main", "apart"):
        collected("--suite-part", part, f"--junitxml={tmp_path / 'report.xml'}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report-apart.xml", "report-main.xml"]


def total(tmp_path: Path, parts: dict[str, tuple[int, dict[str, int] | None]]) -> tuple[int, str, str]:
    for name, (code, counts) in parts.items():
        (tmp_path / f"{name}.code").write_text(str(code))
        if counts is not None:
            (tmp_path / f"{name}.json").write_text(json.dumps(counts))
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "suite_total.py"), str(tmp_path)],
        capture_output=True,
        text=True,
    )
    return done.returncode, done.stdout.strip(), done.stderr.strip()


def test_both_parts_passing_sum_up_to_one_line(tmp_path: Path):
    code, line, _ = total(
        tmp_path, {"main": (0, {"passed": 1300, "skipped": 7}), "apart": (0, {"passed": 22, "skipped": 0})}
    )
    assert (code, line) == (0, "suite: 1322 passed, 0 failed, 7 skipped")


def test_a_part_that_selected_nothing_is_fine_while_the_other_ran(tmp_path: Path):
    code, line, _ = total(tmp_path, {"main": (0, {"passed": 3}), "apart": (5, {"passed": 0})})
    assert (code, line) == (0, "suite: 3 passed, 0 failed, 0 skipped")


@pytest.mark.parametrize(
    ("parts", "expected_code", "said"),
    [
        ({"main": (1, {"passed": 3, "failed": 2}), "apart": (0, {"passed": 1})}, 1, "the main part exited 1"),
        ({"main": (0, {"passed": 3}), "apart": (4, None)}, 4, "the apart part exited 4"),
        ({"main": (5, {}), "apart": (5, {})}, 1, "no tests collected"),
    ],
)
def test_a_failed_broken_or_empty_suite_fails(tmp_path: Path, parts, expected_code: int, said: str):
    code, _, error = total(tmp_path, parts)
    assert code == expected_code and said in error


def _count_build(factory_base: str) -> str:
    class Factory:  # the part of TempPathFactory that built_once uses
        @staticmethod
        def getbasetemp() -> Path:
            return Path(factory_base)

    def build(folder: Path) -> None:
        with (Path(factory_base) / "builds.log").open("a") as log:
            log.write("built\n")
        (folder / "made").write_text("ok")

    return (built_once(Factory(), "thing", build) / "made").read_text()  # type: ignore[arg-type]


def test_a_build_asked_for_by_several_workers_at_once_is_made_once(tmp_path: Path):
    with ProcessPoolExecutor(4) as pool:
        answers = list(pool.map(_count_build, [str(tmp_path)] * 8))
    assert answers == ["ok"] * 8
    assert (tmp_path / "builds.log").read_text() == "built\n"


def test_a_keyed_build_is_kept_between_runs_until_its_key_changes_or_a_test_changed_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    builds: list[str] = []

    def run(key: str, good: bool = True) -> Path:  # a run of its own: a new base folder
        base = tmp_path / f"run{len(list(tmp_path.glob('run*')))}"
        base.mkdir()

        class Factory:
            @staticmethod
            def getbasetemp() -> Path:
                return base

        def build(folder: Path) -> None:
            builds.append(key)
            (folder / "made").write_text(key)
            folder.with_name(f"{folder.name}.pickle").write_text("beside")

        return built_once(Factory(), "thing", build, key=key, still_good=lambda f: good)  # type: ignore[arg-type]

    first = run("0123456789abcdef")
    assert run("0123456789abcdef") == first and builds == ["0123456789abcdef"]  # kept: not built again
    assert first.parent == tmp_path / "cache"
    run("0123456789abcdef", good=False)  # a test left it changed: built again
    assert builds == ["0123456789abcdef"] * 2
    second = run("fedcba9876543210")  # the builder changed: built anew, the old build removed
    assert (second / "made").read_text() == "fedcba9876543210"
    assert sorted(p.name for p in (tmp_path / "cache").iterdir() if not p.name.endswith(".lock")) == [
        "thing-fedcba9876543210",
        "thing-fedcba9876543210.done",
        "thing-fedcba9876543210.pickle",
    ]
    monkeypatch.setenv(CACHE_ENV, "off")
    assert run("fedcba9876543210").parent.name == "built-once" and len(builds) == 4  # off: built per run


def test_a_worker_takes_the_slowest_files_first_and_keeps_each_files_own_order():
    """tests/file_durations.json orders the files on an xdist worker (a file it does not know counts 10 s);
    without a worker the order is as given."""
    files = [
        "tests/unit/test_checks_the_model_writes_tell_verified_fixes_apart.py",  # not in the record: 10 s
        UNIT_FILE,  # 12.8 s in the record
        "tests/integration/test_fix_command_line.py",  # 40.2 s in the record
    ]
    record = json.loads((REPO / "tests" / "file_durations.json").read_text())
    assert files[0] not in record and record[files[1]] < record[files[2]] and record[files[1]] > 10

    def order(worker: bool) -> list[str]:
        env = {k: v for k, v in os.environ.items() if k != "PYTEST_XDIST_WORKER"}
        env |= {"PYTEST_XDIST_WORKER": "gw0"} if worker else {}
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:xdist", *files],
            cwd=REPO, capture_output=True, text=True, timeout=120, env=env,
        )  # fmt: skip
        return [line for line in done.stdout.splitlines() if "::" in line]

    on_worker, as_given = order(True), order(False)
    assert list(dict.fromkeys(i.split("::")[0] for i in on_worker)) == [files[2], files[1], files[0]]
    assert list(dict.fromkeys(i.split("::")[0] for i in as_given)) == files
    for name in files:  # each file's own tests keep their order
        assert [i for i in on_worker if i.startswith(name)] == [i for i in as_given if i.startswith(name)]


def test_the_cpu_profile_records_each_tests_seconds_and_the_benchmark_sums_them(tmp_path: Path):
    """FIXLOOP_CPU_PROFILE=FILE: a JSON line per test with its wall and CPU seconds (children included);
    benchmarks/suite_profile.py totals them by folder and lists the slowest tests and files."""
    profile = tmp_path / "profile.jsonl"
    test = f"{UNIT_FILE}::test_a_failed_broken_or_empty_suite_fails"
    env = {**os.environ, "FIXLOOP_CPU_PROFILE": str(profile)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", test],
        cwd=REPO, capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:]
    rows = [json.loads(line) for line in profile.read_text().splitlines()]
    assert len(rows) == 3 and all(r["id"].startswith(test) and r["cpu"] >= 0 and r["wall"] > 0 for r in rows)
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import suite_profile
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    lines = suite_profile.report(rows, top=2)
    assert lines[0].startswith("3 tests: ") and lines[1].startswith("CPU s by folder: unit ")
    assert sum(line.startswith("  ") and UNIT_FILE in line for line in lines) == 6  # 2 tests, 1 file; x2
