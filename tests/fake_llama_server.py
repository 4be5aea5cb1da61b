"""A stand-in for llama.cpp's `llama-server`: takes the flags fixloop gives it and serves a minimal OpenAI
chat endpoint on the given port, honouring `n` up to `--parallel` as the real one does.

Environment: FAKE_LLAMA_RECORD (a file: one JSON line with this process's pid and argv, then one per chat
request with its `n`, `max_tokens`, `stream` and the start of its last message), FAKE_LLAMA_FULL (record
each request's messages too), FAKE_LLAMA_REPLY (the reply's text), FAKE_LLAMA_GUESS_REPLY (the reply to a
request for one answer at temperature 0, a round's best guess; default FAKE_LLAMA_REPLY), FAKE_LLAMA_DELAY
(seconds each reply takes), FAKE_LLAMA_MODE (`crash`: exit 3 at start; `silent`: never listen).

Its slots hold prompts as llama-server's do: a request goes to the slots whose prompt shares the longest
start with its own (the least recently used first on a tie), `GET /slots` shows each slot's prompt (with
LLAMA_SERVER_SLOTS_DEBUG set, as llama-server), a slot file holds the saved slot's prompt and a restore puts
it back.
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import sys
import threading
import time

VALUE_FLAGS = (
    "--model",
    "--alias",
    "--host",
    "--port",
    "--ctx-size",
    "--threads",
    "--parallel",
    "--flash-attn",
    "--cache-type-k",
    "--cache-type-v",
    "--cache-reuse",
    "--cache-ram",
    "--load-mode",
    "--spec-type",
    "--spec-draft-n-max",
    "--spec-ngram-simple-size-n",
    "--spec-ngram-simple-size-m",
    "--slot-prompt-similarity",
    "--slot-save-path",
)
SWITCHES = ("--kv-unified", "--cont-batching", "--no-webui", "--jinja")


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="llama-server")
    for flag in VALUE_FLAGS:
        parser.add_argument(flag)
    for flag in SWITCHES:
        parser.add_argument(flag, action="store_true")
    parser.add_argument("--version", action="store_true")
    return parser.parse_args(argv)


args = parse(sys.argv[1:])
if args.version:
    print("version: 0 (fake)")
    sys.exit(0)
RECORD = os.environ.get("FAKE_LLAMA_RECORD")
REPLY = os.environ.get("FAKE_LLAMA_REPLY", "ok")
GUESS_REPLY = os.environ.get("FAKE_LLAMA_GUESS_REPLY") or REPLY
DELAY = float(os.environ.get("FAKE_LLAMA_DELAY", "0"))
SLOTS = int(args.parallel or 1)
_lock = threading.Lock()
_served: list[int] = []  # chat requests answered
_prompts = [""] * SLOTS  # each slot's prompt (its messages' text)
_used = [0.0] * SLOTS  # when each slot last took a request


def common_start(a: str, b: str) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))


def take_slots(prompt: str, n: int) -> list[int]:
    """The `n` slots a request with `prompt` goes to (the longest shared start first, then the least recently
    used), which now hold it."""
    with _lock:
        chosen = sorted(range(SLOTS), key=lambda i: (-common_start(_prompts[i], prompt), _used[i]))[:n]
        for i in chosen:
            _prompts[i], _used[i] = prompt, time.monotonic()
    return chosen


def record(entry: dict) -> None:
    if RECORD:
        with _lock, open(RECORD, "a") as out:
            out.write(json.dumps(entry) + "\n")


record({"pid": os.getpid(), "argv": sys.argv[1:]})
print("fake llama-server starting on", args.port, flush=True)
if os.environ.get("FAKE_LLAMA_MODE") == "crash":
    print("error: failed to load model: bad magic", file=sys.stderr, flush=True)
    sys.exit(3)
if os.environ.get("FAKE_LLAMA_MODE") == "silent":
    time.sleep(60)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        if (
            self.path == "/slots"
        ):  # as llama-server: each slot's prompt only with LLAMA_SERVER_SLOTS_DEBUG set
            slots = [
                {"id": i, "n_prompt_tokens": len(prompt) // 4, "is_processing": False}
                | ({"prompt": prompt} if os.environ.get("LLAMA_SERVER_SLOTS_DEBUG") else {})
                for i, prompt in enumerate(_prompts)
            ]
            self.send_json(200, slots)
        elif self.path in ("/v1/models", "/health"):
            self.send_json(200, {"object": "list", "data": [{"id": args.alias, "object": "model"}]})
        else:
            self.send_json(404, {"error": {"message": "not found", "code": 404}})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        if self.path.startswith("/slots/"):
            self.slot_action(body)
            return
        n = int(body.get("n") or 1)
        _served.append(n)
        messages = body.get("messages") or [{}]
        last = str(messages[-1].get("content") or "")[:200]
        prompt = "\n".join(str(message.get("content") or "") for message in messages)
        entry = {
            "n": n,
            "max_tokens": body.get("max_tokens"),
            "stream": bool(body.get("stream")),
            "last": last,
            "slots": take_slots(prompt, min(n, SLOTS)),
        }
        record({**entry, "messages": body.get("messages")} if os.environ.get("FAKE_LLAMA_FULL") else entry)
        if n > SLOTS:
            message = f"n_cmpl must be between 1 and {SLOTS}"
            self.send_json(400, {"error": {"message": message, "type": "invalid_request_error", "code": 400}})
            return
        time.sleep(DELAY)
        usage = {"prompt_tokens": 10, "completion_tokens": 2 * n, "total_tokens": 10 + 2 * n}
        reply = GUESS_REPLY if n == 1 and body.get("temperature") == 0 else REPLY
        if body.get("stream"):
            self.stream(usage, n, reply)
            return
        choices = [
            {"index": i, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}
            for i in range(n)
        ]
        self.send_json(200, self.completion(choices, usage, "chat.completion"))

    def slot_action(self, body: dict) -> None:
        """POST /slots/0?action=save|restore {"filename"}: a file in --slot-save-path, as llama-server."""
        slot, _, action = self.path.removeprefix("/slots/").partition("?action=")
        path = os.path.join(args.slot_save_path or "", body.get("filename") or "")
        found = os.path.isfile(path)
        record({"slot": action, "id": int(slot), "filename": body.get("filename"), "found": found})
        if not args.slot_save_path:
            self.send_json(501, {"error": {"message": "start it with --slot-save-path", "code": 501}})
        elif action == "save":
            with open(path, "w") as slot_file:
                slot_file.write(_prompts[int(slot)])
            self.send_json(200, {"id_slot": int(slot), "filename": body["filename"], "n_saved": 10})
        elif action == "restore" and found:
            with open(path) as slot_file, _lock:
                _prompts[int(slot)] = slot_file.read()
            self.send_json(200, {"id_slot": int(slot), "filename": body["filename"], "n_restored": 10})
        else:
            self.send_json(400, {"error": {"message": "Unable to restore slot: no such file", "code": 400}})

    def completion(self, choices: list, usage: dict, kind: str) -> dict:
        return {
            "id": "fake",
            "object": kind,
            "created": 0,
            "model": args.alias,
            "choices": choices,
            "usage": usage,
        }

    def stream(self, usage: dict, n: int = 1, reply: str = REPLY) -> None:
        """The `n` choices streamed as llama-server streams them: each choice's chunks name it by index, and
        its finish chunk carries its usage."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        chunks = []
        for index in range(n):
            delta = {"index": index, "delta": {"role": "assistant", "content": reply}, "finish_reason": None}
            done = {"index": index, "delta": {}, "finish_reason": "stop"}
            chunks.append(self.completion([delta], None, "chat.completion.chunk"))
            chunks.append(self.completion([done], usage, "chat.completion.chunk"))
        for chunk in chunks:
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True

    def send_json(self, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *parts: object) -> None:
        print("request", *parts, file=sys.stderr, flush=True)


try:
    server = http.server.ThreadingHTTPServer((args.host, int(args.port)), Handler)
except OSError as error:
    print(f"couldn't bind HTTP server socket, errno {error.errno}: address already in use", file=sys.stderr)
    sys.exit(1)
server.serve_forever()
