"""`python -m fixloop` runs the command line."""

from fixloop.cli import main

raise SystemExit(main())
