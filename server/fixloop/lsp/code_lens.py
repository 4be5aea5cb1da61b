"""Code lens above each failing test: "fixloop: fix this failing test"."""

from __future__ import annotations

from lsprotocol import types

from fixloop.errors import FixloopError
from fixloop.lsp.code_actions import fix_command
from fixloop.lsp.server import FixloopServer
from fixloop.lsp.targets import document_text, path_of, relpath, root_of


def def_lines(source: str | None) -> dict[str, int]:
    """Test id suffix (no parameters) -> 1-based def line, from the buffer as it is now."""
    if source is None:
        return {}
    from fixloop.pytest_runner import locate

    try:
        return {fn.test_id_suffix: fn.def_line for fn in locate.test_functions(source)}
    except SyntaxError:
        return {}


def register(server: FixloopServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_CODE_LENS)
    def code_lens(ls: FixloopServer, params: types.CodeLensParams) -> list[types.CodeLens]:
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
            params_part = failure.test_id[len(failure.test_id.split("[", 1)[0]):]
            title = f"fixloop: fix failing test{' ' + params_part if params_part else ''}"
            command = fix_command(failure.test_id, params.text_document.uri)
            command.title = title
            position = types.Position(line=max(0, line - 1), character=0)
            lenses.append(types.CodeLens(range=types.Range(start=position, end=position), command=command))
        return lenses
