"""run_tests takes pytest node ids inside the project and nothing else: no option, no `@file`, no path out.

Every hostile id is one call in one model turn of a real run; pytest must never see any of them.
"""

from __future__ import annotations

from hostile import Attempt, attack


def _run_tests_attacks(trap) -> list[str]:
    outside = trap.outside
    return [
        str(trap.outside_test),
        f"{trap.outside_test}::test_outside",
        "../outside/test_outside.py",
        "tests/../../outside/test_outside.py",
        "docs/test_outside.py",
        "docs/test_outside.py::test_outside",
        "@/etc/passwd",
        "@.env",
        "@notes.txt",
        "-c",
        ".env",
        "-c=.env",
        "--config-file=credentials.ini",
        f"--junitxml={outside}/junit.xml",
        f"--junit-xml={outside}/junit.xml",
        f"--debug={outside}/debug.log",
        f"--log-file={outside}/log.txt",
        f"--basetemp={outside}/victim",
        f"--rootdir={outside}",
        f"--confcutdir={outside}",
        "-p",
        "calc.core",
        "--pyargs",
        "os",
        f"-o cache_dir={outside}",
        f"--override-ini=cache_dir={outside}",
        f"tests/test_core.py --basetemp={outside}/victim",
        "tests/test_core.py::test_add\x00",
        ".env",
        ".env::test_x",
        "notes.txt",
        "credentials.ini::x",
        "calc/core.py",
        "README.md",
        "--collect-only",
        "-h",
        "--version",
        "-x",
        "tests/test_core.py -k add",
        "tests/" + "x" * 4000 + ".py",
        "/etc/passwd",
        "~/test_x.py",
    ]


async def test_run_tests_takes_node_ids_only(trap, scripted_model):
    attempts = [
        Attempt("confinement", "run_tests", repr(t)[:60], {"test_ids": [t]}) for t in _run_tests_attacks(trap)
    ]
    hidden = ["tests/test_core.py::test_sub", f"--basetemp={trap.outside}/victim"]
    attempts.append(Attempt("confinement", "run_tests", "an option among good ids", {"test_ids": hidden}))
    attempts.append(
        Attempt(
            "confinement",
            "run_tests",
            "the target id, as given",
            {"test_ids": ["tests/test_core.py::test_sub"]},
            expect="answer",
        )
    )
    await attack(trap, scripted_model, attempts, "run_tests")
