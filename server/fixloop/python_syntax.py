"""Python source parsed to a tree, one thread at a time.

CPython 3.11 keeps the AST constructor's recursion depth in per-interpreter state: a parse in one thread that
lets another run mid-build (a collection's finalizer, say) while that one parses too ends with
`SystemError: AST constructor recursion depth mismatch` (python/cpython#106905). fixloop parses in the
event loop's thread (model replies) and in worker threads at once (the gate's imports, baseline related
tests, warm starts), so every parse in this process goes through `parse`, which takes a lock.
"""

from __future__ import annotations

import ast
import threading
from typing import Literal, overload

_one_at_a_time = threading.Lock()


@overload
def parse(source: str, filename: str = ..., mode: Literal["exec"] = ...) -> ast.Module: ...
@overload
def parse(source: str, filename: str = ..., *, mode: Literal["eval"]) -> ast.Expression: ...


def parse(source: str, filename: str = "<unknown>", mode: str = "exec") -> ast.AST:
    """`ast.parse(source, filename, mode)`, never beside another thread's parse."""
    with _one_at_a_time:
        return ast.parse(source, filename=filename, mode=mode)
