"""The most candidates a minute any engine could draw on this machine from a cold prompt, today's serving
against llama.cpp's llama-server: the ceiling of issue 18's "≥ 2× today's".

Both servers get the first sampling round's prompt of shipping_quotes (benchmarks/speculation_prompt.json)
read cold, then draw `--count` replies of exactly `--tokens` tokens each (end of text banned):

- today: llama-cpp-python's server as issue 18 found it (`--n_ctx 16384`, every prompt token's logits
  kept), one request after another, as it serves them: the best guess at temperature 0, then each sampled
  one with a hint of its own appended (as fixloop's sampled draws are), its prompt's cached prefix reused;
- new, as fixloop draws: the best guess alone, then the others in one request with `n`;
- new, best case: all of them in one request with `n` (the best guess drawn inside the batch).

A round's seconds are the prompt read cold plus its drawing, so its speed-up is a mediant of the prompt's
and the drawing's: it lies between the two for any prompt length and never passes the larger. Servers
alternate A B B A (--blocks) so a change in the machine's speed hits both.

    python benchmarks/round_ceiling.py --llama-python PY [--llama-server PATH] [--count 6] [--blocks 2]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess

from local_model import line_as_found
from speculation import PROMPT, llama_server_argument, post, wait_ready

from fixloop.model.catalog import get_model
from fixloop.model.llama_server import LLAMA_CPP_PYTHON, Serving
from fixloop.model.pull import model_path

NO_END = {"151643": -100, "151645": -100}  # Qwen2.5's <|endoftext|> and <|im_end|>


def hinted(messages: list[dict], number: int) -> list[dict]:
    """The prompt with a hint of draw `number`'s own at its end, as a sampled draw's is."""
    last = dict(messages[-1])
    last["content"] = f"{last['content']}\n\nHint: draw {number} may look at another line first."
    return [*messages[:-1], last]


def draw(port: int, messages: list[dict], tokens: int, temperature: float, n: int = 1) -> float:
    """Seconds for `n` replies of `tokens` tokens each, in one request."""
    body = {"model": "bench", "messages": messages, "max_tokens": tokens, "temperature": temperature}
    body |= {"seed": 7, "logit_bias": NO_END, **({"n": n} if n > 1 else {})}
    seconds, answer = post(port, body)
    if answer.get("usage", {}).get("completion_tokens", tokens) < tokens:  # (the first reply's, where n > 1)
        raise SystemExit(f"a reply ended before {tokens} tokens: the server ignored the end-of-text ban")
    return seconds


def measure(kind: str, argv: list[str], port: int, count: int, tokens: int) -> dict[str, float]:
    """Seconds to read the prompt cold and to draw `count` replies, on a fresh server."""
    messages = json.loads(PROMPT.read_text())
    with subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as server:
        try:
            wait_ready(port, "/v1/models")  # llama-cpp-python's server has no /health
            cold = draw(port, messages, 1, 0.0)
            if kind == "today":
                first = draw(port, messages, tokens, 0.0)
                rest = sum(draw(port, hinted(messages, n), tokens, 0.8) for n in range(2, count + 1))
                return {"prompt": cold, "drawing": first + rest}
            first = draw(port, messages, tokens, 0.0)
            batch = draw(port, messages, tokens, 0.8, count - 1)
            together = draw(port, messages, tokens, 0.8, count)
            return {"prompt": cold, "drawing": first + batch, "best case": together}
        finally:
            server.terminate()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--llama-python", required=True, help="a Python with llama-cpp-python[server]")
    parser.add_argument("--count", type=int, default=6)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--blocks", type=int, default=2, help="A B, B A, ... pairs of blocks")
    server_path, args = llama_server_argument(parser)
    model = model_path(get_model())
    forms = {
        "today": lambda port: line_as_found(
            Serving(LLAMA_CPP_PYTHON, (args.llama_python, "-m", "llama_cpp.server"), 2, 0).args(
                model, "bench", port
            )
        ),
        "new": lambda port: Serving("llama-server", (str(server_path),), 2, 20_480, args.count).args(
            model, "bench", port
        ),
    }
    figures: dict[str, list[dict[str, float]]] = {kind: [] for kind in forms}
    for pair in range(args.blocks):
        for number, kind in enumerate(list(forms) if pair % 2 == 0 else list(forms)[::-1]):
            port = 18460 + 2 * pair + number
            seen = measure(kind, forms[kind](port), port, args.count, args.tokens)
            figures[kind].append(seen)
            print(f"{kind}: " + ", ".join(f"{key} {value:.1f} s" for key, value in seen.items()), flush=True)
    median = {
        kind: {key: statistics.median(seen[key] for seen in runs) for key in runs[0]}
        for kind, runs in figures.items()
    }
    today, new = median["today"], median["new"]
    today_round = today["prompt"] + today["drawing"]
    print(f"medians of {args.blocks}: {json.dumps(median)}")
    speedup = today["prompt"] / new["prompt"]
    print(f"prompt read cold: today {today['prompt']:.1f} s, new {new['prompt']:.1f} s: {speedup:.2f}x")
    for label, drawing in (("as fixloop draws", new["drawing"]), ("best case, one batch", new["best case"])):
        round_seconds = new["prompt"] + drawing
        print(
            f"{args.count} x {args.tokens} tokens, {label}: "
            f"drawing {today['drawing']:.1f} -> {drawing:.1f} s "
            f"({today['drawing'] / drawing:.2f}x); the round {today_round:.1f} -> {round_seconds:.1f} s: "
            f"{60 * args.count / today_round:.1f} -> {60 * args.count / round_seconds:.1f} candidates/min "
            f"({today_round / round_seconds:.2f}x)"
        )


if __name__ == "__main__":
    main()
