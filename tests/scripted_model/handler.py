"""Answering one chat request: faults, delays and the reply as JSON or as a server-sent event stream."""

from __future__ import annotations

import json
import select
import socket
import sys
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from .replies import Answer
from .script import ScriptError, describe_turn

if TYPE_CHECKING:
    from .server import ScriptedModelServer


class ScriptHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, address: tuple[str, int], handler: type, owner: ScriptedModelServer) -> None:
        self.owner = owner
        super().__init__(address, handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], OSError):
            return  # a client went away; nothing to report
        super().handle_error(request, client_address)


class ChatHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ScriptHTTPServer

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
        flavour = self.owner.flavour
        route = flavour.route(path)
        if route is not None and route[0] in ("models", "tags"):
            refusal = flavour.refuse(self.headers, self.path, self.owner.model, None)
            if refusal is not None:
                self._send_json(refusal.status, refusal.body)
            else:
                self._send_json(200, flavour.listing(route[0], self.owner.model))
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
        route = self.owner.flavour.route(path)
        if route is not None and route[0] == "text" and isinstance(body, dict):
            self._text(body)
            return
        if route is not None and route[0] == "chat":
            if not isinstance(body, dict):
                self._send_error(400, "request body must be a JSON object", "invalid_request_error")
                return
            refusal = self.owner.flavour.refuse(self.headers, self.path, self.owner.model, body, route[1])
            if refusal is not None:
                self._send_json(refusal.status, refusal.body)
                return
            self.owner.enter_flight(1)
            try:
                self._chat(body)
            except OSError:
                raise
            except Exception as error:  # a bug here must reach the test as an answer, not a hang
                self.close_connection = True
                self._send_error(
                    500, f"scripted model internal error: {error!r}", "server_error", retry=False
                )
            finally:
                self.owner.enter_flight(-1)
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

    # text completions

    def _text(self, body: dict[str, Any]) -> None:
        owner = self.owner
        with owner._lock:
            owner.text_requests.append(body)
        if owner.lines is None:
            message = "This is a chat model and not supported in the v1/completions endpoint."
            self._send_error(404, message, "invalid_request_error", retry=False)
            return
        prompt = str(body.get("prompt", "")).rstrip(" ")
        text = next((one["text"] for one in owner.lines if prompt.endswith(one["after"].rstrip(" "))), "")
        choice = {"index": 0, "text": text, "finish_reason": "stop", "logprobs": None}
        usage = {"prompt_tokens": len(prompt) // 4, "completion_tokens": len(text) // 4 + 1}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        completion = {"id": "cmpl-1", "object": "text_completion", "created": 0, "model": owner.model}
        self._send_json(200, {**completion, "choices": [choice], "usage": usage})

    # chat completions

    def _chat(self, body: dict[str, Any]) -> None:
        owner = self.owner
        if body.get("max_tokens") == 1:
            with owner._lock:
                owner.warmups.append(body)
            self._warm_up(body)
            return
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
        owner._log(f"request #{len(owner.requests)}: {describe_turn(turn)}")
        if turn.get("together") and (problem := owner.wait_together(int(turn["together"]))) is not None:
            self._send_error(500, problem, "scripted_expectation_failed", retry=False)
            return
        delay = float(turn.get("delay") or 0)
        if delay > 0 and owner._stopping.wait(delay):
            self.close_connection = True
            return
        stream = bool(turn["stream"]) if "stream" in turn else bool(body.get("stream"))
        fault = turn.get("fault")
        if fault is not None:
            self._fault(fault, turn, body, stream)
            return
        answer = Answer.build(owner, turn, body, int(turn.get("chunk_chars") or 0))
        if stream:
            piece = int(turn.get("chunk_chars") or 0)
            extras = [
                Answer.build(owner, extra, body, int(extra.get("chunk_chars") or piece))
                for extra in turn.get("choices") or []
            ]
            self._stream(answer, body, float(turn.get("chunk_delay") or 0), extras=extras)
        else:
            payload = answer.completion()
            for index, extra in enumerate(turn.get("choices") or [], start=1):  # the turn's other choices
                choice = Answer.build(owner, extra, body).completion()["choices"][0]
                payload["choices"].append({**choice, "index": index})
            self._send_json(200, payload)

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
        answer = Answer.build(self.owner, partial, body)
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

    def _warm_up(self, body: dict[str, Any]) -> None:
        turn = {"content": "", "finish_reason": "length", "usage": {"completion_tokens": 1}}
        answer = Answer.build(self.owner, turn, body)
        if body.get("stream"):
            self._stream(answer, body, record=False)
        else:
            self._send_json(200, answer.completion())

    def _stream(
        self,
        answer: Answer,
        body: dict[str, Any],
        chunk_delay: float = 0,
        record: bool = True,
        extras: Sequence[Answer] = (),
    ) -> None:
        """Send the chunks; a client that goes away before the end is seen and noted (`streams`). The
        turn's other choices (`extras`, asked for with `n`) come interleaved with the first, a chunk of
        each in turn, as llama.cpp's server sends them (a choice's usage chunk right after its finish)."""
        usage = self.owner.flavour.include_usage(body)
        streams = [
            list(one.chunks(include_usage=usage == "chunk", usage_in_last=usage == "last", index=index))
            for index, one in enumerate([answer, *extras])
        ]
        chunks = interleaved(streams) if extras else streams[0]
        seen = {"request": len(self.owner.requests), "sent": 0, "chunks": len(chunks), "disconnected": False}
        if record:
            with self.owner._lock:
                self.owner.streams.append(seen)
        self._start_stream()
        try:
            for index, chunk in enumerate(chunks):
                if index and chunk_delay > 0 and self.owner._stopping.wait(chunk_delay):
                    self.close_connection = True
                    return
                if index and client_gone(self.connection):
                    seen["disconnected"] = True
                    self.close_connection = True
                    return
                self._write_chunk(f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n".encode())
                self.wfile.flush()
                seen["sent"] = index + 1
            self._write_chunk(b"data: [DONE]\n\n")
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError:
            seen["disconnected"] = True
            self.close_connection = True

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


def client_gone(connection: socket.socket) -> bool:
    """Whether the client has closed its end (a readable socket with nothing to read)."""
    try:
        readable, _, _ = select.select([connection], [], [], 0)
        if not readable:
            return False
        return connection.recv(1, socket.MSG_PEEK) == b""
    except (OSError, ValueError):
        return True


def interleaved(streams: Sequence[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The chunks of several choices, one of each in turn; a usage chunk (no choices) goes with the one
    before it."""
    steps = []
    for chunks in streams:
        grouped: list[list[dict[str, Any]]] = []
        for chunk in chunks:
            if grouped and not chunk["choices"]:
                grouped[-1].append(chunk)
            else:
                grouped.append([chunk])
        steps.append(grouped)
    longest = max(len(grouped) for grouped in steps)
    return [chunk for at in range(longest) for grouped in steps if at < len(grouped) for chunk in grouped[at]]
