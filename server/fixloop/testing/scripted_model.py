"""A scripted OpenAI-compatible chat server for tests: each request gets the next turn of a script.

Run it in-process (`ScriptedModelServer`) or as `python -m fixloop.testing.scripted_model --script FILE`,
which prints the base URL (`http://127.0.0.1:PORT/v1`) on the first stdout line and serves until killed.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import signal
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

DEFAULT_MODEL = "scripted"
EXHAUSTED_SUMMARY = "script exhausted"
FAULTS = frozenset({"500", "429", "400_tools", "stall", "drop", "401", "404_model"})
TURN_KEYS = frozenset(
    {
        "content",
        "tool_calls",
        "refusal",
        "stream",
        "finish_reason",
        "fault",
        "retry_after",
        "seconds",
        "expect",
        "delay",
        "chunk_delay",
        "usage",
        "note",
    }
)
EXPECT_KEYS = frozenset(
    {"last_message_contains", "messages_contain", "messages_not_contain", "last_role", "has_tools"}
)
ON_EXHAUSTED = frozenset({"submit", "error"})


class ScriptError(ValueError):
    """A script that cannot be served; the message names the turn and the problem."""


def normalize_script(script: list[dict[str, Any]] | dict[str, Any]) -> dict[str, Any]:
    """Return `{"model", "turns", "on_exhausted"}` from a turn list or a script object, validated."""
    if isinstance(script, list):
        script = {"turns": script}
    if not isinstance(script, dict):
        raise ScriptError(
            f"a script is a list of turns or an object with 'turns', not {type(script).__name__}"
        )
    unknown = set(script) - {"model", "turns", "on_exhausted", "note"}
    if unknown:
        raise ScriptError(f"unknown script keys {sorted(unknown)}; expected model, turns, on_exhausted")
    model = script.get("model", DEFAULT_MODEL)
    on_exhausted = script.get("on_exhausted", "submit")
    if on_exhausted not in ON_EXHAUSTED:
        raise ScriptError(f"on_exhausted must be 'submit' or 'error', not {on_exhausted!r}")
    turns = [validate_turn(turn, index) for index, turn in enumerate(script.get("turns", []))]
    return {"model": str(model), "turns": turns, "on_exhausted": on_exhausted}


def validate_turn(turn: Any, index: int = 0) -> dict[str, Any]:
    """Check one turn and return it with tool calls in one shape; raise ScriptError naming the mistake."""
    where = f"turn {index}"
    if not isinstance(turn, dict):
        raise ScriptError(f"{where}: a turn is a JSON object, not {type(turn).__name__}")
    unknown = set(turn) - TURN_KEYS
    if unknown:
        raise ScriptError(f"{where}: unknown keys {sorted(unknown)}; known: {sorted(TURN_KEYS)}")
    fault = turn.get("fault")
    if fault is not None and str(fault) not in FAULTS:
        raise ScriptError(f"{where}: unknown fault {fault!r}; known: {sorted(FAULTS)}")
    expect = turn.get("expect")
    if expect is not None:
        if not isinstance(expect, dict) or set(expect) - EXPECT_KEYS:
            raise ScriptError(f"{where}: expect is an object with keys among {sorted(EXPECT_KEYS)}")
    normalized = dict(turn)
    if fault is not None:
        normalized["fault"] = str(fault)
    if "tool_calls" in turn:
        calls = turn["tool_calls"]
        if not isinstance(calls, list):
            raise ScriptError(f"{where}: tool_calls is a list")
        normalized["tool_calls"] = [
            _normalize_call(call, f"{where} tool call {i}") for i, call in enumerate(calls)
        ]
    return normalized


def _normalize_call(call: Any, where: str) -> dict[str, Any]:
    if not isinstance(call, dict):
        raise ScriptError(f"{where}: a tool call is an object with name and arguments")
    if "function" in call:  # the OpenAI wire shape is accepted too
        function = call["function"]
        call = {
            "id": call.get("id"),
            "name": function.get("name"),
            "arguments": function.get("arguments", {}),
        }
    name = call.get("name")
    if not isinstance(name, str):
        raise ScriptError(f"{where}: tool call needs a string 'name'")
    arguments = call.get("arguments", {})
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return {"id": call.get("id"), "name": name, "arguments": arguments}


class ScriptedModelServer:
    """An OpenAI-compatible chat endpoint on 127.0.0.1 that plays a script, one turn per chat request.

    A script is a list of turns, or `{"model": "scripted", "turns": [...], "on_exhausted": "submit"}`;
    once the turns run out the answer is a `submit` call ("script exhausted"; a Thought/Action text when
    the request has no tools), or an HTTP 500 with `"on_exhausted": "error"`. A turn is an object:

    - `content` (text), `tool_calls` (`[{"name", "arguments": object or raw string, "id"?}]`, ids
      `call_N`), `refusal` (text in `message.refusal`), `finish_reason` (override);
    - `stream`: force SSE or JSON whatever the request asked; `delay` seconds before answering;
      `chunk_delay` seconds between stream chunks; `usage`: override the token counts;
    - `fault`: "500", "429" (with `retry_after`), "400_tools", "401", "404_model", "stall" (`seconds`,
      default 30: nothing is sent, then the connection closes), "drop" (a few chunks, then the
      connection closes mid-body). A fault consumes its turn, so a retry gets the next one;
    - `expect`: `last_message_contains`, `messages_contain`, `messages_not_contain` (a string or a list),
      `last_role`, `has_tools`; an unmet expectation answers HTTP 500 (`x-should-retry: false`) saying
      what was expected, keeps the turn, and is appended to `failures`;
    - `note`: ignored, for the reader.

    Content is cut at the request's `stop` sequences as a real server does. `requests` holds every chat
    request body in order. Besides /v1/chat/completions and /v1/models the server answers
    GET /_fixloop/requests (the bodies), GET /_fixloop/state and POST /_fixloop/turns (append turns).
    """

    def __init__(
        self,
        script: list[dict[str, Any]] | dict[str, Any],
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        verbose: bool = False,
    ) -> None:
        config = normalize_script(script)
        self.model: str = config["model"]
        self.on_exhausted: str = config["on_exhausted"]
        self.host = host
        self.port = port
        self.verbose = verbose
        self.base_url = ""
        self.requests: list[dict[str, Any]] = []
        self.failures: list[str] = []
        self._turns: deque[dict[str, Any]] = deque(config["turns"])
        self._served = 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._call_ids = itertools.count(1)
        self._completion_ids = itertools.count(1)
        self._connections: set[socket.socket] = set()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # lifecycle

    def start(self) -> str:
        """Bind, serve in a daemon thread and return the base URL (ending in /v1)."""
        if self._httpd is not None:
            return self.base_url
        self._stopping.clear()
        self._httpd = _HTTPServer((self.host, self.port), _Handler, self)
        self.port = self._httpd.server_address[1]
        self.base_url = f"http://{self.host}:{self.port}/v1"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="scripted-model",
            daemon=True,
        )
        self._thread.start()
        return self.base_url

    def stop(self) -> None:
        """Stop serving now: waits, stalls and open connections are cut. Safe to call twice."""
        self._stopping.set()
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        httpd.shutdown()
        httpd.server_close()
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if self._thread is not None:
            self._thread.join(timeout=2)
            self._thread = None

    def __enter__(self) -> ScriptedModelServer:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # script

    def add_turns(self, turns: Iterable[dict[str, Any]] | dict[str, Any]) -> None:
        """Append turns (one turn object or a list) to the end of the script."""
        if isinstance(turns, dict):
            turns = [turns]
        with self._lock:
            start = self._served + len(self._turns)
            self._turns.extend(validate_turn(turn, start + i) for i, turn in enumerate(turns))

    def state(self) -> dict[str, Any]:
        """Progress through the script: turns served and remaining, requests received, unmet expectations."""
        with self._lock:
            return {
                "served": self._served,
                "remaining": len(self._turns),
                "requests": len(self.requests),
                "failures": list(self.failures),
            }

    @property
    def remaining(self) -> int:
        """Turns not yet consumed."""
        with self._lock:
            return len(self._turns)

    def _take_turn(self, body: dict[str, Any]) -> tuple[str, Any]:
        """Record the request and return ("turn", turn), ("mismatch", message) or ("exhausted", count)."""
        with self._lock:
            self.requests.append(body)
            number = len(self.requests)
            if not self._turns:
                return "exhausted", self._served
            turn = self._turns[0]
            problem = _check_expect(turn.get("expect"), body)
            if problem is not None:
                # the turn stays, so a retry meets the same clear message instead of a shifted script
                message = f"scripted model: request #{number} (turn {self._served}) expected {problem}"
                self.failures.append(message)
                return "mismatch", message
            self._turns.popleft()
            self._served += 1
            return "turn", turn

    def _log(self, text: str) -> None:
        if self.verbose:
            print(f"[scripted-model] {text}", file=sys.stderr, flush=True)

    # answers

    def _new_call_id(self) -> str:
        return f"call_{next(self._call_ids)}"

    def _new_completion_id(self) -> str:
        return f"chatcmpl-scripted-{next(self._completion_ids)}"

    def _exhausted_turn(self, body: dict[str, Any]) -> dict[str, Any]:
        arguments = {"summary": EXHAUSTED_SUMMARY}
        if body.get("tools"):
            return {"tool_calls": [{"id": None, "name": "submit", "arguments": json.dumps(arguments)}]}
        text = f"Thought: the script is exhausted.\nAction: submit\nAction Input: {json.dumps(arguments)}"
        return {"content": text}


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, address: tuple[str, int], handler: type, owner: ScriptedModelServer) -> None:
        self.owner = owner
        super().__init__(address, handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], OSError):
            return  # a client went away; nothing to report
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    @property
    def owner(self) -> ScriptedModelServer:
        return self.server.owner

    def setup(self) -> None:
        super().setup()
        with self.owner._lock:
            self.owner._connections.add(self.connection)

    def finish(self) -> None:
        with self.owner._lock:
            self.owner._connections.discard(self.connection)
        try:
            super().finish()
        except OSError:
            pass

    def handle(self) -> None:
        try:
            super().handle()
        except OSError:
            pass  # client disconnects and stop() cutting connections are normal here

    def log_message(self, format: str, *args: Any) -> None:
        pass

    # routing

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        if path in ("/v1/models", "/models"):
            model = {"id": self.owner.model, "object": "model", "created": 0, "owned_by": "fixloop"}
            self._send_json(200, {"object": "list", "data": [model]})
        elif path == "/_fixloop/requests":
            with self.owner._lock:
                bodies = list(self.owner.requests)
            self._send_json(200, bodies)
        elif path == "/_fixloop/state":
            self._send_json(200, self.owner.state())
        else:
            self._send_error(404, f"no route GET {path}", "not_found_error")

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        try:
            body = self._read_json()
        except ValueError as error:
            self._send_error(400, f"request body is not JSON: {error}", "invalid_request_error")
            return
        if path in ("/v1/chat/completions", "/chat/completions"):
            if not isinstance(body, dict):
                self._send_error(400, "request body must be a JSON object", "invalid_request_error")
                return
            try:
                self._chat(body)
            except OSError:
                raise
            except Exception as error:  # a bug here must reach the test as an answer, not a hang
                self.close_connection = True
                self._send_error(
                    500, f"scripted model internal error: {error!r}", "server_error", retry=False
                )
        elif path == "/_fixloop/turns":
            try:
                self.owner.add_turns(body)
            except ScriptError as error:
                self._send_error(400, str(error), "invalid_request_error")
                return
            self._send_json(200, {"remaining": self.owner.remaining})
        else:
            self._send_error(404, f"no route POST {path}", "not_found_error")

    def _read_json(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        return json.loads(raw.decode("utf-8")) if raw else {}

    # chat completions

    def _chat(self, body: dict[str, Any]) -> None:
        owner = self.owner
        kind, value = owner._take_turn(body)
        if kind == "mismatch":
            owner._log(value)
            self._send_error(500, value, "scripted_expectation_failed", retry=False)
            return
        if kind == "exhausted":
            if owner.on_exhausted == "error":
                message = (
                    f"scripted model: script exhausted after {value} turns (request #{len(owner.requests)})"
                )
                owner._log(message)
                self._send_error(500, message, "scripted_script_exhausted", retry=False)
                return
            turn = owner._exhausted_turn(body)
        else:
            turn = value
        owner._log(f"request #{len(owner.requests)}: {_describe(turn)}")
        delay = float(turn.get("delay") or 0)
        if delay > 0 and owner._stopping.wait(delay):
            self.close_connection = True
            return
        stream = bool(turn["stream"]) if "stream" in turn else bool(body.get("stream"))
        fault = turn.get("fault")
        if fault is not None:
            self._fault(fault, turn, body, stream)
            return
        answer = _Answer.build(owner, turn, body)
        if stream:
            self._stream(answer, body, float(turn.get("chunk_delay") or 0))
        else:
            self._send_json(200, answer.completion())

    def _fault(self, fault: str, turn: dict[str, Any], body: dict[str, Any], stream: bool) -> None:
        if fault == "500":
            self._send_error(500, "The server had an error while processing your request.", "server_error")
        elif fault == "429":
            retry_after = turn.get("retry_after", 1)
            self._send_error(
                429,
                "Rate limit reached for requests. Please try again later.",
                "rate_limit_exceeded",
                headers={"Retry-After": str(retry_after)},
                code="rate_limit_exceeded",
            )
        elif fault == "400_tools":
            self._send_error(
                400, "tools are not supported by this model", "invalid_request_error", param="tools"
            )
        elif fault == "401":
            self._send_error(
                401, "Incorrect API key provided.", "invalid_request_error", code="invalid_api_key"
            )
        elif fault == "404_model":
            model = body.get("model", self.owner.model)
            self._send_error(
                404,
                f"The model `{model}` does not exist or you do not have access to it.",
                "invalid_request_error",
                code="model_not_found",
            )
        elif fault == "stall":
            self.owner._stopping.wait(float(turn.get("seconds", 30)))
            self.close_connection = True  # nothing was sent; the client sees the connection close
        elif fault == "drop":
            self._drop(turn, body, stream)

    def _drop(self, turn: dict[str, Any], body: dict[str, Any], stream: bool) -> None:
        self.close_connection = True
        partial = dict(turn)
        partial.setdefault("content", "Let me look at the failing test and the code it")
        answer = _Answer.build(self.owner, partial, body)
        if stream:
            self._start_stream()
            for index, chunk in enumerate(answer.chunks(include_usage=False)):
                if index >= 3:
                    break
                self._write_chunk(f"data: {json.dumps(chunk)}\n\n".encode())
        else:
            payload = json.dumps(answer.completion()).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload[: len(payload) // 2])
        self.wfile.flush()
        self.connection.shutdown(socket.SHUT_RDWR)

    def _stream(self, answer: _Answer, body: dict[str, Any], chunk_delay: float = 0) -> None:
        options = body.get("stream_options") or {}
        self._start_stream()
        for index, chunk in enumerate(answer.chunks(include_usage=bool(options.get("include_usage")))):
            if index and chunk_delay > 0 and self.owner._stopping.wait(chunk_delay):
                self.close_connection = True
                return
            self._write_chunk(f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n".encode())
        self._write_chunk(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")

    # plain answers

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _send_error(
        self,
        status: int,
        message: str,
        error_type: str,
        *,
        headers: dict[str, str] | None = None,
        code: str | None = None,
        param: str | None = None,
        retry: bool | None = None,
    ) -> None:
        headers = dict(headers or {})
        if retry is not None:
            headers["x-should-retry"] = "true" if retry else "false"
        error = {"message": message, "type": error_type, "param": param, "code": code}
        self._send_json(status, {"error": error}, headers)


class _Answer:
    """One assistant message, rendered as a ChatCompletion or as a list of chunks."""

    def __init__(
        self,
        *,
        completion_id: str,
        model: str,
        content: str | None,
        refusal: str | None,
        tool_calls: list[dict[str, Any]],
        finish_reason: str,
        usage: dict[str, int],
    ) -> None:
        self.completion_id = completion_id
        self.model = model
        self.content = content
        self.refusal = refusal
        self.tool_calls = tool_calls
        self.finish_reason = finish_reason
        self.usage = usage
        self.created = int(time.time())

    @classmethod
    def build(cls, owner: ScriptedModelServer, turn: dict[str, Any], body: dict[str, Any]) -> _Answer:
        content = turn.get("content")
        stopped = False
        if isinstance(content, str):
            content, stopped = _apply_stop(content, body.get("stop"))
        refusal = turn.get("refusal")
        calls = [
            {
                "id": call.get("id") or owner._new_call_id(),
                "name": call["name"],
                "arguments": call["arguments"],
            }
            for call in turn.get("tool_calls", [])
        ]
        if "finish_reason" in turn:
            finish_reason = str(turn["finish_reason"])
        elif calls and not stopped:
            finish_reason = "tool_calls"
        else:
            finish_reason = "stop"
        prompt_tokens = len(json.dumps(body.get("messages", []), ensure_ascii=False)) // 4
        produced = (content or "") + (refusal or "") + json.dumps(calls)
        completion_tokens = max(1, len(produced) // 4) if (content or refusal or calls) else 0
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        usage.update(turn.get("usage") or {})
        if "usage" in turn and "total_tokens" not in turn["usage"]:
            usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        return cls(
            completion_id=owner._new_completion_id(),
            model=str(body.get("model") or owner.model),
            content=content,
            refusal=refusal,
            tool_calls=calls,
            finish_reason=finish_reason,
            usage=usage,
        )

    def completion(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": self.content, "refusal": self.refusal}
        if self.tool_calls:
            message["tool_calls"] = [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": c["arguments"]},
                }
                for c in self.tool_calls
            ]
        return {
            "id": self.completion_id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "system_fingerprint": None,
            "choices": [
                {"index": 0, "message": message, "finish_reason": self.finish_reason, "logprobs": None}
            ],
            "usage": self.usage,
        }

    def chunks(self, *, include_usage: bool) -> Iterator[dict[str, Any]]:
        """The stream as OpenAI sends it: role, small content deltas, tool calls with split arguments,
        the finish reason, then (when asked) a usage chunk with no choices."""
        yield self._chunk({"role": "assistant", "content": "", "refusal": None}, include_usage)
        for piece in _pieces(self.content or ""):
            yield self._chunk({"content": piece}, include_usage)
        for piece in _pieces(self.refusal or ""):
            yield self._chunk({"refusal": piece}, include_usage)
        for index, call in enumerate(self.tool_calls):
            head = {
                "index": index,
                "id": call["id"],
                "type": "function",
                "function": {"name": call["name"], "arguments": ""},
            }
            yield self._chunk({"tool_calls": [head]}, include_usage)
            for piece in _pieces(call["arguments"]):
                yield self._chunk(
                    {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}, include_usage
                )
        yield self._chunk({}, include_usage, finish_reason=self.finish_reason)
        if include_usage:
            yield {**self._base(), "choices": [], "usage": self.usage}

    def _base(self) -> dict[str, Any]:
        return {
            "id": self.completion_id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "system_fingerprint": None,
        }

    def _chunk(
        self, delta: dict[str, Any], include_usage: bool, finish_reason: str | None = None
    ) -> dict[str, Any]:
        chunk = {
            **self._base(),
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}],
        }
        if include_usage:
            chunk["usage"] = None
        return chunk


def _pieces(text: str) -> list[str]:
    """Split text into a handful of small deltas (at least four when it is long enough)."""
    if not text:
        return []
    size = min(24, max(1, math.ceil(len(text) / 4)))
    return [text[i : i + size] for i in range(0, len(text), size)]


def _apply_stop(content: str, stop: Any) -> tuple[str, bool]:
    """Cut content at the first stop sequence, as a real server does."""
    sequences = [stop] if isinstance(stop, str) else [s for s in (stop or []) if isinstance(s, str) and s]
    cut = min((content.find(s) for s in sequences if s and s in content), default=-1)
    return (content[:cut], True) if cut >= 0 else (content, False)


def _message_text(message: Any) -> str:
    """All the text of one request message: content (string or parts), refusal and tool calls."""
    if not isinstance(message, dict):
        return str(message)
    parts: list[str] = []
    content = message.get("content")
    if isinstance(content, str):
        parts.append(content)
    elif isinstance(content, list):
        parts.extend(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
    for call in message.get("tool_calls") or []:
        function = call.get("function", {}) if isinstance(call, dict) else {}
        parts.append(f"{function.get('name', '')}({function.get('arguments', '')})")
    if message.get("refusal"):
        parts.append(str(message["refusal"]))
    return "\n".join(parts)


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else [str(v) for v in value]


def _clip(text: str, limit: int = 300) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "…")


def _check_expect(expect: dict[str, Any] | None, body: dict[str, Any]) -> str | None:
    """None when the request meets the turn's expectations, else what was expected and what came."""
    if not expect:
        return None
    messages = body.get("messages") or []
    texts = [_message_text(m) for m in messages]
    last = texts[-1] if texts else ""
    problems: list[str] = []
    for needle in _as_list(expect.get("last_message_contains")):
        if needle not in last:
            problems.append(f"the last message to contain {needle!r}; it was {_clip(last)}")
    for needle in _as_list(expect.get("messages_contain")):
        if not any(needle in text for text in texts):
            problems.append(f"some message to contain {needle!r}; none of the {len(texts)} messages does")
    for needle in _as_list(expect.get("messages_not_contain")):
        if any(needle in text for text in texts):
            problems.append(f"no message to contain {needle!r}")
    if "last_role" in expect:
        role = messages[-1].get("role") if messages and isinstance(messages[-1], dict) else None
        if role != expect["last_role"]:
            problems.append(f"the last message's role to be {expect['last_role']!r}; it was {role!r}")
    if "has_tools" in expect and bool(body.get("tools")) != bool(expect["has_tools"]):
        problems.append(f"tools {'in' if expect['has_tools'] else 'absent from'} the request")
    return "; ".join(problems) or None


def _describe(turn: dict[str, Any]) -> str:
    if "fault" in turn:
        return f"fault {turn['fault']}"
    calls = ", ".join(c["name"] for c in turn.get("tool_calls", []))
    text = (turn.get("content") or turn.get("refusal") or "").replace("\n", " ")
    return f"tools [{calls}] {text[:60]}" if calls else f"text {text[:80]!r}"


def load_script(path: str) -> list[dict[str, Any]] | dict[str, Any]:
    """Read a JSON script from a file, or from stdin when path is '-'."""
    text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    return json.loads(text)


def main(argv: list[str] | None = None) -> int:
    """Serve a script until SIGTERM/SIGINT; the first stdout line is the base URL."""
    parser = argparse.ArgumentParser(prog="python -m fixloop.testing.scripted_model", description=__doc__)
    parser.add_argument(
        "--script", required=True, help="JSON script file (a list of turns or an object), or -"
    )
    parser.add_argument("--port", type=int, default=0, help="port to bind (default: any free port)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--quiet", action="store_true", help="no per-request lines on stderr")
    args = parser.parse_args(argv)
    try:
        server = ScriptedModelServer(
            load_script(args.script), host=args.host, port=args.port, verbose=not args.quiet
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
