"""Every parse in fixloop's process takes one lock: on CPython 3.11, two threads building trees at once
trip `SystemError: AST constructor recursion depth mismatch` (python/cpython#106905). A fix run of
shipping_quotes ended in that "internal error" when a re-ask's reply was parsed in the event loop while
the gate parsed a candidate's imports in a worker thread."""

from __future__ import annotations

import ast
import gc
import threading
import time
from collections.abc import Callable
from pathlib import Path

import fixloop
from fixloop.python_syntax import parse

PACKAGE = Path(fixloop.__file__).parent
# the pytest plugin runs inside the tests' own process, where fixloop starts no threads
OWN_PARSER = {"python_syntax.py", "pytest_runner/report_plugin.py"}
SOURCE = "\n".join(
    f"def f{i}(a, b=[1, (2, {{3: 4}})]):\n    return [x for x in (a, b) if x]\n" for i in range(300)
)


def parse_errors(parser: Callable[[str], object], seconds: float) -> list[SystemError]:
    """Three threads parsing for `seconds`, a collection letting another thread run mid-build."""
    errors: list[SystemError] = []
    stop = time.monotonic() + seconds

    def switch(_phase: str, _info: dict) -> None:
        time.sleep(0)

    def work() -> None:
        while time.monotonic() < stop and not errors:
            try:
                parser(SOURCE)
            except SystemError as error:
                errors.append(error)

    threshold = gc.get_threshold()
    gc.callbacks.append(switch)
    gc.set_threshold(50, 1, 1)
    try:
        threads = [threading.Thread(target=work) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        gc.callbacks.remove(switch)
        gc.set_threshold(*threshold)
    return errors


def test_threads_parsing_at_once_get_their_trees() -> None:
    """With `ast.parse` itself this stress fails within the second on CPython 3.11.7."""
    assert parse_errors(parse, seconds=1.5) == []


def test_no_module_parses_python_but_through_the_lock() -> None:
    calls = [
        f"{path.relative_to(PACKAGE)}:{node.lineno}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if str(path.relative_to(PACKAGE)) not in OWN_PARSER
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call) and ast.unparse(node.func) in ("ast.parse", "compile")
    ]
    assert calls == [], "parse with fixloop.python_syntax.parse: ast.parse is not thread-safe on 3.11"
