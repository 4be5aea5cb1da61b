"""Why the managed model's follow-ups go one request at a time: llama-server shares a prompt across slots
only within one request (`n`). On the first sampling round's prompt of shipping_quotes
(benchmarks/speculation_prompt.json), with fixloop's flags and 5 slots: a best guess read cold and again
warm, then twice a batch of 5 (`n`, temperature 0.8) followed by four re-asks (each reply with "it changes
nothing" after it): sent at once, then one after the other. Prints seconds, prompt tokens read
(`timings.prompt_n`) and reply tokens per re-ask.

    python benchmarks/slot_sharing.py [--llama-server PATH]
"""

from __future__ import annotations

import json
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from speculation import PROMPT, llama_server_argument, post, wait_ready

from fixloop.model.catalog import get_model
from fixloop.model.llama_server import Serving
from fixloop.model.pull import model_path

PORT = 18433
ASK = (
    "Your code is the code that is there already: it changes nothing, and the test still fails. "
    "Find what is wrong in it, change it, and reply with the corrected code."
)


def body(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"model": "bench", "messages": messages, "max_tokens": 400, **extra}


def reasks(messages: list[dict[str, Any]], replies: list[str]) -> list[dict[str, Any]]:
    follow = [{"role": "user", "content": ASK}]
    return [
        body([*messages, {"role": "assistant", "content": reply}, *follow], temperature=0.8, seed=60 + i)
        for i, reply in enumerate(replies[:4])
    ]


def measure(messages: list[dict[str, Any]]) -> None:
    seconds, _ = post(PORT, body(messages, temperature=0.0))
    print(f"best guess cold {seconds:.1f} s")
    seconds, _ = post(PORT, body(messages, temperature=0.0))
    print(f"best guess warm {seconds:.1f} s")
    for trial, at_once in enumerate((True, False)):
        seconds, answer = post(PORT, body(messages, temperature=0.8, seed=2 + trial, n=5))
        replies = [choice["message"]["content"] for choice in answer["choices"]]
        print(f"batch of 5: {seconds:.1f} s, reply lengths {[len(reply) for reply in replies]}")
        started = time.monotonic()
        if at_once:
            with ThreadPoolExecutor(4) as pool:
                outs = list(pool.map(lambda one: post(PORT, one), reasks(messages, replies)))
        else:
            outs = [post(PORT, one) for one in reasks(messages, replies)]
        each = [
            (round(s, 1), a.get("timings", {}).get("prompt_n"), a["usage"]["completion_tokens"])
            for s, a in outs
        ]
        label = "at once" if at_once else "one after the other"
        print(f"4 re-asks {label}: {time.monotonic() - started:.1f} s; (s, prompt read, reply) each: {each}")


def main() -> None:
    server_path, _ = llama_server_argument()
    serving = Serving("llama-server", (str(server_path),), 2, 20_480, 5, speculative=False)
    argv = serving.args(model_path(get_model()), "bench", PORT)
    with subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as server:
        try:
            wait_ready(PORT)
            measure(json.loads(PROMPT.read_text()))
        finally:
            server.terminate()


if __name__ == "__main__":
    main()
