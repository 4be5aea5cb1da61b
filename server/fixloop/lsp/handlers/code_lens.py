"""textDocument/codeLens: "fixloop: fix failing test" above each test known to fail."""

from __future__ import annotations

from lsprotocol import types

from fixloop.errors import FixloopError
from fixloop.lsp.commands import fix_command
from fixloop.lsp.documents import document_text, path_of, relpath, root_of, uri_of
from fixloop.lsp.server import FixloopServer
from fixloop.pytest_runner import locate

METHOD = types.TEXT_DOCUMENT_CODE_LENS


def def_lines(source: str | None) -> dict[str, int]:
    """Test id suffix (no parameters) -> 1-based def line, from the buffer as it is now."""
    if source is None:
        return {}
    try:
        return {fn.test_id_suffix: fn.def_line for fn in locate.test_functions(source)}
    except SyntaxError:
        return {}


def handle(ls: FixloopServer, params: types.CodeLensParams) -> list[types.CodeLens]:
    try:
        path = path_of(params.text_document.uri)
        root = root_of(ls, path)
    except FixloopError:
        return []
    failures = ls.failures.in_file(root, relpath(root, path))
    if not failures:
        return []
    lines = def_lines(document_text(ls, params.text_document.uri))
    lenses = []
    for failure in sorted(failures, key=lambda f: f.test_id):
        suffix = failure.test_id.split("::", 1)[1].split("[", 1)[0]
        line = lines.get(suffix, failure.line)
        params_part = failure.test_id[len(failure.test_id.split("[", 1)[0]) :]
        title = f"fixloop: fix failing test{' ' + params_part if params_part else ''}"
        command = fix_command(failure.test_id, params.text_document.uri, title, root=uri_of(root, ""))
        position = types.Position(line=max(0, line - 1), character=0)
        lenses.append(types.CodeLens(range=types.Range(start=position, end=position), command=command))
    return lenses
