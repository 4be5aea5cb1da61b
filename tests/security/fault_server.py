"""A chat endpoint that misbehaves on purpose: each request gets the next raw answer of a list.

Answers are names (see `FAULTS`) or turns (`{"tool_calls": [...]}`) answered as a correct stream; the
list's last answer repeats. Raw bytes, so the client meets exactly what a broken server or proxy sends.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _sse(chunks: list[dict[str, Any]]) -> bytes:
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def turn_stream(turn: dict[str, Any]) -> bytes:
    """A well-formed stream for a turn: optional content, then tool calls."""
    chunks = [_chunk({"role": "assistant", "content": turn.get("content", "")})]
    for index, call in enumerate(turn.get("tool_calls", [])):
        arguments = call["arguments"] if isinstance(call["arguments"], str) else json.dumps(call["arguments"])
        chunks.append(
            _chunk(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": f"call_{index}",
                            "type": "function",
                            "function": {"name": call["name"], "arguments": arguments},
                        }
                    ]
                }
            )
        )
    chunks.append(_chunk({}, "tool_calls" if turn.get("tool_calls") else "stop"))
    return _sse(chunks)


GOOD_START = _sse([_chunk({"role": "assistant", "content": "Let me"})])[: -len(b"data: [DONE]\n\n")]
# name -> (status, content type, body, seconds to stall after the body, close without finishing)
FAULTS: dict[str, tuple[int, str, bytes, float, bool]] = {
    "malformed_line": (200, "text/event-stream", b"data: {this is not json\n\n", 0, False),
    "malformed_after_good": (200, "text/event-stream", GOOD_START + b'data: {"choices": [\n\n', 0, False),
    "html_200": (200, "text/html", b"<html><body>Welcome to nginx!</body></html>", 0, False),
    "json_for_a_stream": (
        200,
        "application/json",
        json.dumps(
            {"id": "x", "object": "chat.completion", "choices": [], "model": "m", "created": 0}
        ).encode(),
        0,
        False,
    ),
    "plain_text_200": (200, "text/plain", b"OK", 0, False),
    "empty_choices": (
        200,
        "text/event-stream",
        _sse([{"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": []}]),
        0,
        False,
    ),
    "null_choices": (
        200,
        "text/event-stream",
        _sse([{"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": None}]),
        0,
        False,
    ),
    "only_done": (200, "text/event-stream", b"data: [DONE]\n\n", 0, False),
    "empty_body": (200, "text/event-stream", b"", 0, False),
    "error_in_stream": (
        200,
        "text/event-stream",
        b'data: {"error": {"message": "upstream overloaded", "type": "server_error"}}\n\n',
        0,
        False,
    ),
    "invalid_utf8": (200, "text/event-stream", b"data: \xff\xfe\xfa\n\n", 0, False),
    "html_502": (502, "text/html", b"<html><h1>502 Bad Gateway</h1></html>", 0, False),
    "html_500": (500, "text/html", b"<html><h1>Internal Server Error</h1></html>", 0, False),
    "json_not_object": (400, "application/json", b"[1, 2, 3]", 0, False),
    "stall_mid_stream": (200, "text/event-stream", GOOD_START, 30, False),
    "stall_before_headers": (0, "", b"", 30, False),
    "cut_mid_stream": (200, "text/event-stream", GOOD_START, 0, True),
    "bad_tool_call": (
        200,
        "text/event-stream",
        _sse([_chunk({"tool_calls": [{"index": 0, "function": None}]}), _chunk({}, "tool_calls")]),
        0,
        False,
    ),
}


class FaultServer:
    """Plays `answers` in order (the last one repeats) on 127.0.0.1; `count` counts the requests."""

    def __init__(self, answers: list[str | dict[str, Any]]) -> None:
        self.answers = list(answers)
        self.count = 0
        self.requests: list[dict[str, Any]] = []  # the scripted model's field; bodies are not kept here
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                with owner._lock:
                    index = min(owner.count, len(owner.answers) - 1)
                    owner.count += 1
                answer = owner.answers[index]
                try:
                    owner._answer(self, answer)
                except OSError:
                    pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def _answer(self, handler: BaseHTTPRequestHandler, answer: str | dict[str, Any]) -> None:
        if isinstance(answer, dict):
            status, kind, body, stall, cut = 200, "text/event-stream", turn_stream(answer), 0, False
        else:
            status, kind, body, stall, cut = FAULTS[answer]
        if status == 0:  # accept, then say nothing at all
            self.stopping.wait(stall)
            handler.close_connection = True
            return
        handler.send_response(status)
        handler.send_header("Content-Type", kind)
        if stall or cut:
            handler.send_header("Transfer-Encoding", "chunked")
            handler.end_headers()
            handler.wfile.write(f"{len(body):x}\r\n".encode() + body + b"\r\n")
            handler.wfile.flush()
            if stall:
                self.stopping.wait(stall)
            handler.close_connection = True
            handler.connection.shutdown(socket.SHUT_RDWR)
            return
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    def __enter__(self) -> FaultServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        time.sleep(0.05)
