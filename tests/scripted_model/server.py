"""A scripted OpenAI-compatible chat server for tests: each request gets the next turn of a script.

Run it in-process (`ScriptedModelServer`) or as `python -m scripted_model --script FILE` (tests/ on the path),
which prints the base URL (`http://127.0.0.1:PORT/v1`) on the first stdout line and serves until killed.
"""

from __future__ import annotations

import itertools
import json
import socket
import sys
import threading
from collections import deque
from collections.abc import Iterable
from typing import Any

from .flavours import FLAVOURS, Flavour
from .handler import ChatHandler, ScriptHTTPServer
from .script import (
    EXHAUSTED_SUMMARY,
    check_expect,
    normalize_script,
    validate_turn,
)


class ScriptedModelServer:
    """An OpenAI-compatible chat endpoint on 127.0.0.1 that plays a script, one turn per chat request.

    A script is a list of turns, or `{"model": "scripted", "turns": [...], "on_exhausted": "submit"}`;
    once the turns run out the answer is a `submit` call ("script exhausted"; a Thought/Action text when
    the request has no tools), or an HTTP 500 with `"on_exhausted": "error"`. A turn is an object:

    - `content` (text), `tool_calls` (`[{"name", "arguments": object or raw string, "id"?}]`, ids
      `call_N`), `refusal` (text in `message.refusal`), `finish_reason` (override);
    - `stream`: force SSE or JSON whatever the request asked; `delay` seconds before answering;
      `chunk_delay` seconds between stream chunks; `chunk_chars`: content in pieces of this many
      characters (a token-like pace); `usage`: override the token counts (`prompt_tokens_details`:
      `{"cached_tokens": N}` as hosted APIs report a prompt cache); `timings`: llama-server's object
      (`prompt_n`, `cache_n`, ...) in the last chunk and the completion; `together`: N holds the answer
      until N chat requests are in flight at once (else, after 10 s, an HTTP 500 and a `failures` entry);
    - `fault`: "500", "429" (with `retry_after`), "400_tools", "401", "404_model", "stall" (`seconds`,
      default 30: nothing is sent, then the connection closes), "drop" (a few chunks, then the
      connection closes mid-body). A fault consumes its turn, so a retry gets the next one;
    - `expect`: `last_message_contains`, `messages_contain`, `messages_not_contain` (a string or a list),
      `last_role`, `has_tools`; an unmet expectation answers HTTP 500 (`x-should-retry: false`) saying
      what was expected, keeps the turn, and is appended to `failures`;
    - `note`: ignored, for the reader.

    A script object's `lines` (`[{"after", "text"}]`) answers POST /v1/completions (a text completion): the
    first entry whose `after` the prompt ends with (trailing spaces aside) gives the text, none gives "";
    without `lines` that route answers 404, as a chat-only hosted model does. `text_requests` holds those
    bodies; they consume no turn.

    Content is cut at the request's `stop` sequences as a real server does. `requests` holds every chat
    request body in order. `streams` records each streamed answer: chunks sent of how many, and whether
    the client went away before the end (`disconnected`), as a server that stops generating sees it.
    `flavour` makes it answer as a real server does (flavours.py: openai, azure, ollama, lmstudio, vllm,
    llamacpp: listing shape, auth, tools or not, usage in streams or not); the default, `generic`, takes
    anything. A request with `max_tokens: 1` is a prompt-cache warm-up: it is answered with one empty
    token, kept in `warmups`, and consumes no turn. Besides /v1/chat/completions and /v1/models the server
    answers GET /_fixloop/requests (the bodies), GET /_fixloop/state and POST /_fixloop/turns (append
    turns).
    """

    def __init__(
        self,
        script: list[dict[str, Any]] | dict[str, Any],
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        verbose: bool = False,
        flavour: str = "generic",
    ) -> None:
        config = normalize_script(script)
        self.model: str = config["model"]
        if flavour not in FLAVOURS:
            raise ValueError(f"unknown flavour {flavour!r}; choose from {', '.join(FLAVOURS)}")
        self.flavour: Flavour = FLAVOURS[flavour]
        self.on_exhausted: str = config["on_exhausted"]
        self.host = host
        self.port = port
        self.verbose = verbose
        self.base_url = ""
        self.requests: list[dict[str, Any]] = []
        self.warmups: list[dict[str, Any]] = []
        self.lines: list[dict[str, str]] | None = config["lines"]
        self.text_requests: list[dict[str, Any]] = []
        self.streams: list[dict[str, Any]] = []
        self.failures: list[str] = []
        self._turns: deque[dict[str, Any]] = deque(config["turns"])
        self._served = 0
        self._lock = threading.Lock()
        self._in_flight = 0  # chat requests being answered
        self._arrivals = 0  # chat requests received in all
        self._flight = threading.Condition()
        self._stopping = threading.Event()
        self._call_ids = itertools.count(1)
        self._completion_ids = itertools.count(1)
        self._connections: set[socket.socket] = set()
        self._httpd: ScriptHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # lifecycle

    def start(self) -> str:
        """Bind, serve in a daemon thread and return the base URL (ending in /v1; Azure: the deployment)."""
        if self._httpd is not None:
            return self.base_url
        self._stopping.clear()
        self._httpd = ScriptHTTPServer((self.host, self.port), ChatHandler, self)
        self.port = self._httpd.server_address[1]
        self.base_url = f"http://{self.host}:{self.port}{self.flavour.base_path(self.model)}"
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
            problem = check_expect(turn.get("expect"), body)
            if problem is not None:
                # the turn stays, so a retry meets the same clear message instead of a shifted script
                message = f"scripted model: request #{number} (turn {self._served}) expected {problem}"
                self.failures.append(message)
                return "mismatch", message
            self._turns.popleft()
            self._served += 1
            return "turn", turn

    def enter_flight(self, change: int) -> None:
        """One chat request more (1) or fewer (-1) in flight."""
        with self._flight:
            self._in_flight += change
            self._arrivals += max(change, 0)
            self._flight.notify_all()

    def wait_together(self, count: int, seconds: float = 10.0) -> str | None:
        """Wait until this request has been in flight with `count - 1` others (those in flight now and those
        that come while it waits); the failure, if they never come."""
        with self._flight:
            others, arrivals = self._in_flight - 1, self._arrivals
            met = self._flight.wait_for(lambda: others + self._arrivals - arrivals >= count - 1, seconds)
            if met:
                return None
            message = f"scripted model: {count} requests were expected in flight together, {others + 1} came"
        with self._lock:
            self.failures.append(message)
        return message

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
