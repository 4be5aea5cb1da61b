"""The command line's exit codes (the public contract, docs/contract.md)."""

EXIT_FIXED, EXIT_NOT_FIXED, EXIT_BAD_INPUT, EXIT_NOTHING_TO_FIX, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
