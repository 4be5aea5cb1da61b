"""One handler per file, named after the LSP method or command it serves; `lsp/features.py` registers them."""
