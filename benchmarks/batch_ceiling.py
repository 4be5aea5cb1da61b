"""What drawing candidates together buys on this machine, and what the KV cache's form costs:
llama.cpp's llama-server with flash attention off and an f16 KV cache (fixloop's flags,
model/llama_server.py) and with flash attention on and a q8_0 KV cache (half the KV memory), on the first
sampling round's prompt of shipping_quotes (benchmarks/speculation_prompt.json). Each form is started
afresh in turn, A B B A ... (--blocks), so a change in the machine's speed hits both: the prompt read cold
(tokens/s from the server's own timings), then from the cached prompt `n` replies of exactly 64 tokens each
(`ignore_eos`) for each n of --counts, --trials times: the median seconds, the tokens/s of all replies
together, and that over one reply's (n=1 of the same block). It bounds what a batch can gain over drawing
candidates one at a time.

    python benchmarks/batch_ceiling.py [--llama-server PATH] [--counts 1,2,3,5,7] [--trials 3] [--blocks 2]
        [--forms 0,1]   # indices into FORMS: 2 is flash attention with an f16 cache, 3 a larger prompt step
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess

from speculation import PROMPT, llama_server_argument, post, wait_ready

from fixloop.model.catalog import get_model
from fixloop.model.llama_server import Serving
from fixloop.model.pull import model_path

TOKENS = 64
FORMS = {
    "flash attention off, f16 KV (fixloop's flags)": {},
    "flash attention on, q8_0 KV": {"--flash-attn": "on", "--cache-type-k": "q8_0", "--cache-type-v": "q8_0"},
    "flash attention on, f16 KV": {"--flash-attn": "on"},
    "prompt read 1,024 tokens a step": {"--ubatch-size": "1024", "--batch-size": "2048"},
}


def with_flags(argv: list[str], changes: dict[str, str]) -> list[str]:
    argv = list(argv)
    for flag, value in changes.items():
        if flag in argv:
            argv[argv.index(flag) + 1] = value
        else:
            argv += [flag, value]
    return argv


def block(label: str, argv: list[str], port: int, counts: list[int], trials: int) -> None:
    """One form's figures on a fresh server."""
    messages = json.loads(PROMPT.read_text())
    with subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as server:
        try:
            wait_ready(port)
            _, cold = post(port, {"model": "bench", "messages": messages, "max_tokens": 1, "temperature": 0})
            timings = cold["timings"]
            print(
                f"{label}: prompt {timings['prompt_n']} tokens cold in {timings['prompt_ms'] / 1000:.1f} s "
                f"({timings['prompt_per_second']:.1f} tokens/s)",
                flush=True,
            )
            single = None
            for count in counts:
                body = {"model": "bench", "messages": messages, "max_tokens": TOKENS, "ignore_eos": True}
                seconds = statistics.median(
                    post(port, {**body, "temperature": 0.8, "seed": 3 + trial, "n": count})[0]
                    for trial in range(trials)
                )
                rate = count * TOKENS / seconds
                single = single or rate
                print(
                    f"  n={count}: {seconds:.1f} s for {count} x {TOKENS} tokens, {rate:.1f} tokens/s "
                    f"({rate / single:.2f}x one reply's)",
                    flush=True,
                )
        finally:
            server.terminate()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--counts", default="1,2,3,5,7")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--blocks", type=int, default=2, help="A B, B A, ... pairs of blocks")
    parser.add_argument("--forms", default="0,1", help="which of FORMS, by index (0: fixloop's flags)")
    server_path, args = llama_server_argument(parser)
    counts = [int(count) for count in args.counts.split(",")]
    model = model_path(get_model())
    forms = [list(FORMS.items())[int(index)] for index in args.forms.split(",")]
    for pair in range(args.blocks):
        for number, (label, changes) in enumerate(forms if pair % 2 == 0 else forms[::-1]):
            port = 18440 + 2 * pair + number
            argv = Serving("llama-server", (str(server_path),), 2, 20_480, 8).args(model, "bench", port)
            block(label, with_flags(argv, changes), port, counts, args.trials)


if __name__ == "__main__":
    main()
