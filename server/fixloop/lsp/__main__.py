"""`python -m fixloop.lsp` runs the language server on stdio (what `fixloop serve` does)."""

from fixloop.lsp import serve

raise SystemExit(serve())
