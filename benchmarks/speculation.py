"""llama.cpp's llama-server with and without n-gram speculative decoding, on the first sampling round's
prompt of the bench case shipping_quotes (benchmarks/speculation_prompt.json, as fixloop sent it to the
managed model): one reply read cold, the same reply again with its prompt cached, and a batch of 5 (`n`,
temperature 0.8, three seeds) from the cached prompt. Prints the seconds of each; the server gets
fixloop's flags (model/llama_server.py).

    python benchmarks/speculation.py [--llama-server PATH]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
import urllib.request
from pathlib import Path

from fixloop.model.catalog import get_model
from fixloop.model.llama_server import SPECULATION, Serving, llama_server_path
from fixloop.model.pull import model_path

PROMPT = Path(__file__).resolve().parent / "speculation_prompt.json"


def post(port: int, body: dict) -> tuple[float, dict]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/chat/completions",
        json.dumps(body).encode(),
        {"Content-Type": "application/json"},
    )
    started = time.monotonic()
    with urllib.request.urlopen(request, timeout=900) as answer:
        return time.monotonic() - started, json.loads(answer.read())


def wait_ready(port: int, path: str = "/health") -> None:
    for _ in range(600):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=1)
            return
        except OSError:
            time.sleep(0.5)
    raise SystemExit("llama-server did not start")


def llama_server_argument(parser: argparse.ArgumentParser | None = None) -> tuple[Path, argparse.Namespace]:
    """The llama-server to measure (--llama-server, else the one fixloop finds) and the other arguments
    `parser` declares."""
    parser = parser or argparse.ArgumentParser()
    parser.add_argument("--llama-server", type=Path, default=llama_server_path())
    args = parser.parse_args()
    if args.llama_server is None:
        raise SystemExit("no llama-server: scripts/build-llama-server.sh builds one")
    return args.llama_server, args


def main() -> None:
    server_path, _ = llama_server_argument()
    messages = json.loads(PROMPT.read_text())
    model = model_path(get_model())
    for label, speculative, port in (("speculation on", True, 18431), ("speculation off", False, 18432)):
        serving = Serving("llama-server", (str(server_path),), 2, 20_480, 5, speculative=speculative)
        argv = serving.args(model, "bench", port)
        assert (SPECULATION[0] in argv) == speculative
        with subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as server:
            try:
                wait_ready(port)
                body = {"model": "bench", "messages": messages, "max_tokens": 256}
                cold, first = post(port, {**body, "temperature": 0})
                warm, _ = post(port, {**body, "temperature": 0})
                batches = [
                    post(port, {**body, "temperature": 0.8, "seed": 7 + i, "n": 5})[0] for i in range(3)
                ]
            finally:
                server.terminate()
        print(
            f"{label}: one reply cold {cold:.1f} s ({first['usage']['prompt_tokens']} prompt tokens), "
            f"warm {warm:.1f} s; a batch of 5 warm, 3 seeds: {', '.join(f'{b:.1f}' for b in batches)} s "
            f"(median {sorted(batches)[1]:.1f})",
            flush=True,
        )


if __name__ == "__main__":
    main()
