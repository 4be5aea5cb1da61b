"""One assistant turn as the client returns it, read from a completion object or from stream chunks."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol


@dataclass(frozen=True)
class ToolCallRequest:
    """A native tool call as the model sent it (arguments are the raw JSON text)."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class ModelReply:
    """One assistant turn; `cut` says why the stream was closed early ("call": the model had written its
    calls and moved on; "echo": it was copying the prompt back), `unused` is the text that came after
    the part kept in `content`, and `estimated` marks token counts made here rather than reported.

    Of the prompt's tokens, `prompt_processed` the server read anew and `prompt_cached` it found in its
    prompt cache, as it reported them (llama-server's `timings`, a hosted API's `cached_tokens`); None
    where it did not say. `seconds`: how long the request took (on the first reply of a batch)."""

    content: str
    tool_calls: tuple[ToolCallRequest, ...]
    finish_reason: str | None
    refusal: str | None
    prompt_tokens: int
    completion_tokens: int
    cut: str | None = None
    unused: str = ""
    unused_tokens: int = 0
    estimated: bool = False
    prompt_processed: int | None = None
    prompt_cached: int | None = None
    seconds: float = 0.0


@dataclass(frozen=True)
class StreamCut:
    """Where to end a streamed reply: keep the first `keep` characters of its text; `reason` says why."""

    keep: int
    reason: str


class StreamWatch(Protocol):
    """Told each piece of a streamed reply as it arrives; answers a StreamCut to close the stream there."""

    def on_text(self, delta: str) -> StreamCut | None: ...

    def on_call(self, index: int, name: str, arguments: str) -> StreamCut | None: ...


def reply_from_completion(response: Any) -> ModelReply:
    return replies_from_completion(response)[0]


def replies_from_completion(response: Any) -> list[ModelReply]:
    """One reply per choice of a completion (several when it was asked for `n`); the usage, which is the
    request's, goes with the first."""
    if not hasattr(response, "choices"):
        raise MalformedReply(f"a reply that is not a chat completion ({short_text(response)})")
    if not response.choices:
        raise MalformedReply("a chat completion with no choices")
    timings = getattr(response, "timings", None)  # llama-server's, beside the usage
    return [
        _reply_from_choice(choice, *((response.usage, timings) if index == 0 else (None, None)))
        for index, choice in enumerate(response.choices)
    ]


def _reply_from_choice(choice: Any, usage: Any, timings: Any = None) -> ModelReply:
    message = choice.message if choice is not None else None
    calls = tuple(
        ToolCallRequest(
            id=call.id or f"call_{index}", name=call.function.name, arguments=call.function.arguments or ""
        )
        for index, call in enumerate((message.tool_calls if message else None) or [])
        if getattr(call, "function", None) is not None
    )
    processed, cached = prompt_figures(usage, timings)
    return ModelReply(
        content=(message.content if message else None) or "",
        tool_calls=calls,
        finish_reason=choice.finish_reason if choice is not None else None,
        refusal=getattr(message, "refusal", None) if message else None,
        prompt_tokens=(usage.prompt_tokens if usage else 0) or 0,
        completion_tokens=(usage.completion_tokens if usage else 0) or 0,
        prompt_processed=processed,
        prompt_cached=cached,
    )


COMPLETION_ROLE = "completion"  # a text completion's prompt, recorded as the one message of its request


def text_completion_reply(response: Any) -> ModelReply:
    """A text completion (`/v1/completions`) as a reply: its first choice's text, with the request's usage
    and llama-server's timings, so that it is counted like a chat request."""
    choices = getattr(response, "choices", None) or []
    usage, timings = getattr(response, "usage", None), getattr(response, "timings", None)
    processed, cached = prompt_figures(usage, timings)
    return ModelReply(
        content=str(getattr(choices[0], "text", "") or "") if choices else "",
        tool_calls=(),
        finish_reason=getattr(choices[0], "finish_reason", None) if choices else None,
        refusal=None,
        prompt_tokens=_token_count(_field(usage, "prompt_tokens")) or 0,
        completion_tokens=_token_count(_field(usage, "completion_tokens")) or 0,
        prompt_processed=processed,
        prompt_cached=cached,
    )


def prompt_figures(usage: Any, timings: Any) -> tuple[int | None, int | None]:
    """Of a request's prompt tokens, (processed, cached): read anew and found in the server's prompt cache,
    from llama-server's `timings` (`prompt_n`, `cache_n`) or else a hosted API's
    `usage.prompt_tokens_details.cached_tokens`; one of them known gives the other from the usage's
    `prompt_tokens`. None where the server said nothing (llama-cpp-python sends no timings)."""
    processed = _token_count(_field(timings, "prompt_n"))
    cached = _token_count(_field(timings, "cache_n"))
    if cached is None:
        cached = _token_count(_field(_field(usage, "prompt_tokens_details"), "cached_tokens"))
    sent = _token_count(_field(usage, "prompt_tokens"))
    if sent:
        if processed is None and cached is not None:
            processed = max(sent - cached, 0)
        elif cached is None and processed is not None:
            cached = max(sent - processed, 0)
    return processed, cached


def _field(value: Any, name: str) -> Any:
    """A field of a JSON object as the openai package hands it: a model's attribute or a dict's key."""
    if isinstance(value, dict):
        return value.get(name)
    return getattr(value, name, None) if value is not None else None


def _token_count(value: Any) -> int | None:
    """A count the server reported; None for anything else (missing, negative, not a number)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return None
    return int(value)


class StreamedReply:
    """A streamed turn as its chunks arrive: text, refusal, tool calls by index, finish reason, usage."""

    def __init__(self, watch: StreamWatch | None = None) -> None:
        self.watch = watch
        self.cut: StreamCut | None = None  # set when the watch ends the stream: the caller closes it
        self.ends: list[int] = []  # where each text piece ends (pieces count tokens when there is no usage)
        self.content: list[str] = []
        self.refusal: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish_reason: str | None = None
        self.prompt_tokens = self.completion_tokens = 0
        self.usage: Any = None  # the last usage reported
        self.timings: Any = None  # llama-server's `timings` (in its last chunk), where it sent them
        self.answered = False  # a chunk with a choice came

    def add(self, chunk: Any) -> None:
        if getattr(chunk, "usage", None) is not None:
            self.add_usage(chunk.usage)
        self.add_timings(chunk)
        for choice in getattr(chunk, "choices", None) or []:
            self.add_choice(choice)

    def add_usage(self, usage: Any) -> None:
        self.usage = usage
        self.prompt_tokens = usage.prompt_tokens or 0
        self.completion_tokens = usage.completion_tokens or 0

    def add_timings(self, chunk: Any) -> None:
        timings = getattr(chunk, "timings", None)
        if timings is not None:
            self.timings = timings

    def add_choice(self, choice: Any) -> None:
        self.answered = True
        if choice.delta is not None:
            self._add_delta(choice.delta)
        if choice.finish_reason:
            self.finish_reason = choice.finish_reason

    @property
    def over(self) -> bool:
        """Whether nothing more of this reply is wanted: it finished, or its watch cut it."""
        return self.finish_reason is not None or self.cut is not None

    def _add_delta(self, delta: Any) -> None:
        if delta.content:
            self.content.append(delta.content)
            self.ends.append((self.ends[-1] if self.ends else 0) + len(delta.content))
            if self.watch is not None and self.cut is None:
                self.cut = self.watch.on_text(delta.content)
        if getattr(delta, "refusal", None):
            self.refusal.append(delta.refusal)
        for call in delta.tool_calls or []:
            slot = self.calls.setdefault(call.index or 0, {"id": "", "name": "", "arguments": ""})
            if call.id:
                slot["id"] = call.id
            if call.function is not None:
                slot["name"] += call.function.name or ""
                slot["arguments"] += call.function.arguments or ""
            if self.watch is not None and self.cut is None:
                self.cut = self.watch.on_call(call.index or 0, slot["name"], slot["arguments"])

    def _estimated_completion(self, text_chars: int) -> int:
        """A completion's tokens when none were reported: by pieces (about a token each), or 4 characters
        a token, text and call arguments, whichever is more."""
        return max(len(self.ends), (text_chars + sum(len(c["arguments"]) for c in self.calls.values())) // 4)

    def reply(
        self,
        messages: Sequence[dict[str, Any]],
        tools: list[dict] | None,
        prompt_ratio: float = 0.25,
        *,
        own_usage: bool = True,
    ) -> ModelReply:
        """The turn; usage not reported (no usage in streams, or a stream closed early), or not its own (a
        whole request's, `own_usage` False), is estimated: the prompt at `prompt_ratio` tokens a character,
        the completion by pieces (about a token each)."""
        text, unused = "".join(self.content), ""
        cut = self.cut
        if cut is not None:
            text, unused = text[: cut.keep], text[cut.keep :]
        prompt_tokens = self.prompt_tokens if own_usage else 0
        completion_tokens = self.completion_tokens if own_usage else 0
        estimated = not prompt_tokens
        if estimated:
            prompt_tokens = round(prompt_chars(messages, tools) * prompt_ratio)
            completion_tokens = self._estimated_completion(len(text) + len(unused))
        tool_calls = tuple(
            ToolCallRequest(id=c["id"] or f"call_{index}", name=c["name"], arguments=c["arguments"])
            for index, c in sorted(self.calls.items())
            if c["name"]
        )
        return ModelReply(
            text,
            tool_calls,
            self.finish_reason or ("stop" if cut else None),
            "".join(self.refusal) or None,
            prompt_tokens,
            completion_tokens,
            cut=cut.reason if cut else None,
            unused=unused,
            unused_tokens=sum(1 for end in self.ends if cut is not None and end > cut.keep),
            estimated=estimated,
            **self._cache_figures(own_usage),
        )

    def _cache_figures(self, own_usage: bool) -> dict[str, int | None]:
        """The prompt's tokens the server read anew and found cached, when the usage is this reply's own."""
        processed, cached = prompt_figures(self.usage, self.timings) if own_usage else (None, None)
        return {"prompt_processed": processed, "prompt_cached": cached}


class StreamedChoices:
    """The `n` choices of one streamed request as their chunks arrive (each chunk names its choice by
    `index`), each read by a StreamedReply with a watch of its own (`watch()`, or none). A usage chunk
    belongs to the choice that finished last: llama.cpp's server sends one after each choice's finish,
    OpenAI one for the whole request at its end."""

    def __init__(self, n: int, watch: Callable[[], StreamWatch] | None = None) -> None:
        self.n = n
        self.watch = watch
        self.choices: dict[int, StreamedReply] = {}
        self.finished_last: StreamedReply | None = None
        self.usages = 0  # usage chunks seen

    def add(self, chunk: Any) -> None:
        for choice in getattr(chunk, "choices", None) or []:
            index = getattr(choice, "index", 0) or 0
            one = self.choices.get(index)
            if one is None:
                one = self.choices[index] = StreamedReply(self.watch() if self.watch else None)
            one.add_choice(choice)
            if choice.finish_reason:
                self.finished_last = one
        usage = getattr(chunk, "usage", None)
        owner = self.finished_last or next(iter(self.choices.values()), None)
        if usage is not None and owner is not None:
            owner.add_usage(usage)
            self.usages += 1
        if owner is not None:
            owner.add_timings(chunk)

    @property
    def answered(self) -> bool:
        return any(one.answered for one in self.choices.values())

    @property
    def over(self) -> bool:
        """Whether all `n` choices came and nothing more of any is wanted (the stream can be closed)."""
        return len(self.choices) >= self.n and all(one.over for one in self.choices.values())

    def replies(
        self, messages: Sequence[dict[str, Any]], tools: list[dict] | None, prompt_ratio: float = 0.25
    ) -> list[ModelReply]:
        """One reply per choice, in index order; the prompt, read once, is counted with the first. One usage
        for a whole request of several finished choices (OpenAI's form) gives the prompt's tokens to the first
        and the completions' total less the others' estimates to the one that finished last."""
        ordered = [one for _, one in sorted(self.choices.items())]
        one_usage = len(ordered) > 1 and self.usages == 1 and all(one.finish_reason for one in ordered)
        whole = self.finished_last if one_usage else None
        # the reply that holds the whole request's usage gets its own share, worked out from the others
        replies = [one.reply(messages, tools, prompt_ratio, own_usage=one is not whole) for one in ordered]
        if whole is not None:
            last = ordered.index(whole)
            others = sum(reply.completion_tokens for at, reply in enumerate(replies) if at != last)
            replies[last] = replace(replies[last], completion_tokens=max(whole.completion_tokens - others, 0))
            processed, cached = prompt_figures(whole.usage, whole.timings)
            read = {"prompt_tokens": whole.prompt_tokens, "prompt_processed": processed}
            replies[0] = replace(replies[0], **read, prompt_cached=cached)
        unread = {"prompt_tokens": 0, "prompt_processed": None, "prompt_cached": None}
        return replies[:1] + [replace(reply, **unread) for reply in replies[1:]]


def prompt_chars(messages: Sequence[dict[str, Any]], tools: list[dict] | None) -> int:
    return sum(len(json.dumps(m)) for m in messages) + len(json.dumps(tools or []))


class MalformedReply(Exception):
    """The endpoint answered 200 with something that is not a chat completion."""


def short_text(value: Any) -> str:
    text = " ".join(str(value).split())
    return (text[:80] + "…") if len(text) > 80 else (text or "an empty body")


def refused_connection(error: Exception) -> bool:
    text = _connection_cause(error)
    return "refused" in text or "all connection attempts failed" in text


def closed_before_answering(error: Exception) -> bool:
    """Whether the server closed the connection before it sent anything: most often an idle kept-alive
    connection the server had just let go (llama.cpp's server lets one go after 5 s), so the request was
    never read and sending it again costs nothing."""
    return "without sending a response" in _connection_cause(error)


def _connection_cause(error: Exception) -> str:
    """Why a connection failed (not timed out), lower case; empty for any other error."""
    import openai  # the client's own errors: loaded with the client, not with every reader of replies

    if not isinstance(error, openai.APIConnectionError) or isinstance(error, openai.APITimeoutError):
        return ""
    return str(error.__cause__ or error.__context__ or "").lower()


def error_message(error: Exception) -> str:
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])[:300]
        if isinstance(inner, str):
            return inner[:300]
    return short_error(error)


def content_type_of(error: Exception) -> str:
    response = getattr(error, "response", None)
    kind = response.headers.get("content-type", "") if response is not None else ""
    return (kind.split(";")[0] or "an empty") if kind else "an empty"


def short_error(error: BaseException | None) -> str:
    text = str(error).strip().splitlines()[0] if error is not None and str(error).strip() else ""
    return (text or type(error).__name__)[:300]


def first_token_logprobs(choice: Any) -> dict[str, float]:
    """The top logprobs of a completion choice's first token, by token text; empty where none came."""
    tokens = getattr(getattr(choice, "logprobs", None), "content", None) or []
    return {alt.token.strip(): alt.logprob for alt in (tokens[0].top_logprobs or [])} if tokens else {}
