"""`python -m scripted_model --script FILE` (tests/ on the path): serve a script; the URL is printed first."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from typing import Any

from .flavours import FLAVOURS
from .script import load_script
from .server import ScriptedModelServer


def main(argv: list[str] | None = None) -> int:
    """Serve a script until SIGTERM/SIGINT; the first stdout line is the base URL."""
    parser = argparse.ArgumentParser(prog="python -m scripted_model", description=__doc__)
    parser.add_argument(
        "--script", required=True, help="JSON script file (a list of turns or an object), or -"
    )
    parser.add_argument("--port", type=int, default=0, help="port to bind (default: any free port)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--quiet", action="store_true", help="no per-request lines on stderr")
    parser.add_argument(
        "--flavour",
        default="generic",
        choices=sorted(FLAVOURS),
        help="answer as this server does (listing, auth, tools, usage); default: generic",
    )
    args = parser.parse_args(argv)
    try:
        server = ScriptedModelServer(
            load_script(args.script),
            host=args.host,
            port=args.port,
            verbose=not args.quiet,
            flavour=args.flavour,
        )
    except (OSError, ValueError) as error:
        print(f"scripted model: {error}", file=sys.stderr)
        return 2
    done = threading.Event()

    def request_stop(signum: int, frame: Any) -> None:
        done.set()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    print(server.start(), flush=True)
    try:
        while not done.wait(0.2):
            pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
