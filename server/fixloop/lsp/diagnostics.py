"""Failing tests as diagnostics: what is known to fail, where, and publishing it per test file."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from fixloop.lsp.documents import document_text, uri_of
from fixloop.pytest_runner import TestOutcome, locate

SOURCE = "fixloop"
CODE = "failing-test"


@dataclass(frozen=True)
class Failure:
    """A test known to fail: where to show it (1-based line in the test file) and why."""

    test_id: str
    file: str  # relative to the root, '/' separators
    line: int
    message: str

    @property
    def name(self) -> str:
        return self.test_id.split("::", 1)[-1]


def failure_of(root: Path, outcome: TestOutcome) -> Failure:
    """Place a failing TestOutcome at the failing line in its test file, else at the test's def line."""
    test_id = outcome.test_id
    file = test_id.split("::", 1)[0]
    line: int | None = None
    frame = outcome.frame_in(file)
    if frame is not None:
        line = frame.line
    elif outcome.location and outcome.location.rsplit(":", 1)[0] == file:
        tail = outcome.location.rsplit(":", 1)[-1]
        line = int(tail) if tail.isdigit() else None
    if line is None:
        line = def_line(root, test_id) or 1
    message = outcome.message or f"{outcome.outcome}"
    return Failure(test_id=test_id, file=file, line=line, message=message)


def def_line(root: Path, test_id: str) -> int | None:
    found = locate.position_of(root, test_id)
    return found[1] if found else None


class FailureStore:
    """Known failing tests per workspace root, the source of diagnostics, quickfixes and code lenses."""

    def __init__(self) -> None:
        self._by_root: dict[Path, dict[str, Failure]] = {}

    def failing(self, root: Path) -> dict[str, Failure]:
        return self._by_root.setdefault(root, {})

    def in_file(self, root: Path, file: str) -> list[Failure]:
        return [f for f in self.failing(root).values() if f.file == file]

    def update(
        self, root: Path, ran: Iterable[str], failures: Iterable[Failure], files_in_scope: Iterable[str] = ()
    ) -> set[str]:
        """Record one run's outcome; returns the test files whose diagnostics changed.

        Tests that ran and did not fail are cleared, and so is any stored failure in a file that
        was run as a whole (the test may have been renamed or deleted).
        """
        store = self.failing(root)
        scope = set(files_in_scope)
        touched: set[str] = set()
        new = {f.test_id: f for f in failures}
        for test_id in set(ran) | {t for t, f in store.items() if f.file in scope or _in_dir(f.file, scope)}:
            if test_id in store and test_id not in new:
                touched.add(store.pop(test_id).file)
        for test_id, failure in new.items():
            if store.get(test_id) != failure:
                touched.add(failure.file)
            store[test_id] = failure
        return touched


def _in_dir(file: str, scope: set[str]) -> bool:
    return any(s in ("", ".") or file.startswith(s.rstrip("/") + "/") for s in scope)


def to_diagnostic(failure: Failure, source_text: str | None) -> types.Diagnostic:
    line = max(0, failure.line - 1)
    end = 0
    start = 0
    if source_text is not None:
        lines = source_text.splitlines()
        if line < len(lines):
            text = lines[line]
            start = len(text) - len(text.lstrip())
            end = len(text.encode("utf-16-le")) // 2
    rng = types.Range(
        start=types.Position(line=line, character=start),
        end=types.Position(line=line, character=max(end, start)),
    )
    return types.Diagnostic(
        range=rng,
        message=f"{failure.name} failed: {failure.message}",
        severity=types.DiagnosticSeverity.Error,
        source=SOURCE,
        code=CODE,
        data={"testId": failure.test_id},
    )


def publish(ls: LanguageServer, store: FailureStore, root: Path, files: Iterable[str]) -> None:
    """Send each file's diagnostics as `store` knows them (an empty list clears a file)."""
    for file in sorted(set(files)):
        uri = uri_of(root, file)
        text = document_text(ls, uri)
        diagnostics = [to_diagnostic(f, text) for f in store.in_file(root, file)]
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics))
