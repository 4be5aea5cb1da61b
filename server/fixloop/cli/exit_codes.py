"""The command line's exit codes (the README's contract)."""

EXIT_FIXED, EXIT_NOT_FIXED, EXIT_BAD_INPUT, EXIT_NOTHING_TO_FIX, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
