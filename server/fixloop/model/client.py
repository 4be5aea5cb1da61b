"""The chat model client: openai.AsyncOpenAI streaming, retries with backoff, usage, one-line errors.

Time limits: one answer may take `timeout` seconds (the request timeout); once a stream has started, a
gap of `stall_timeout` seconds without a chunk ends it (a stalled server); retries stop after
`retry_window` seconds in all. Whatever the endpoint sends, the caller gets a ModelReply or a ModelError
with a one-line message, never a parser's exception.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import openai

from fixloop.errors import ModelError
from fixloop.model.call_errors import Endpoint, explain
from fixloop.model.replies import (
    COMPLETION_ROLE,
    MalformedReply,
    ModelReply,
    StreamedChoices,
    StreamedReply,
    StreamWatch,
    closed_before_answering,
    error_message,
    first_token_logprobs,
    prompt_chars,
    refused_connection,
    replies_from_completion,
    reply_from_completion,
    short_error,
    text_completion_reply,
)
from fixloop.model.request_options import Sampling, open_client
from fixloop.model.stream_chunks import Stalled, stream_chunks
from fixloop.model.usage_tally import AnsweredRequest, UsageTally

log = logging.getLogger(__name__)

RETRYABLE_STATUS = {408, 409, 429, 500, 502, 503, 504}
STALL_TIMEOUT = 60.0  # seconds without a chunk once a stream has started
RETRY_WINDOW = 120.0  # seconds of retrying, in all, for one turn
MAX_STALL_RETRIES = 1  # a server that stalls twice in a row is stuck, not busy
Watches = Callable[[], StreamWatch] | None  # a watch for each reply of a batch, or none


class ChatModel:
    """An OpenAI-compatible chat endpoint; `complete` streams one turn and returns it whole."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None,
        timeout: float = 600.0,
        max_retries: int = 4,
        temperature: float | None = None,
        stream: bool = True,
        backoff: float = 1.0,
        max_output_tokens: int | None = 4096,
        stall_timeout: float = STALL_TIMEOUT,
        retry_window: float = RETRY_WINDOW,
        api_version: str = "",
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.max_retries = max_retries
        self.temperature = temperature  # None: not sent (some hosted reasoning models reject it)
        self.stream = stream
        self.timeout = timeout
        self.stall_timeout = min(stall_timeout, timeout)
        self.retry_window = min(retry_window, 4 * timeout)  # a short timeout asks for a quick answer
        self.backoff = backoff
        # Sent explicitly: some servers (llama.cpp among them) cut replies short with a small default.
        self.max_output_tokens = max_output_tokens
        self.seconds = 0.0  # time spent waiting for the endpoint, retries included (the run's figures)
        self.tally = UsageTally()  # the answered requests' tokens and seconds (the run's figures)
        self.on_request: Callable[[AnsweredRequest], None] | None = None  # told each answered request
        self._prompt_ratio = 0.25  # prompt tokens a character, as the server last reported them
        connect = openai.Timeout(timeout, connect=min(timeout, 30.0))
        self._client = open_client(self.base_url, api_key, api_version=api_version, timeout=connect)

    async def close(self) -> None:
        await self._client.close()

    async def complete(
        self,
        messages: Sequence[dict[str, Any]],
        *,
        tools: list[dict] | None = None,
        stop: Sequence[str] | None = None,
        watch: StreamWatch | None = None,
        sampling: Sampling | None = None,
    ) -> ModelReply:
        """One model turn, retried on 429/5xx/connection errors (Retry-After honoured) within the retry
        window; any other failure is a ModelError with one line saying what the endpoint did.

        With a `watch`, the stream is closed as soon as the watch answers a cut (the server stops
        generating when the client goes away); the reply keeps the text up to the cut. `sampling` draws
        this turn at another temperature (and seed) than the client's.
        """
        started = time.monotonic()
        try:
            reply = await self._complete_retried(messages, tools, stop, watch, sampling)
        finally:
            self.seconds += time.monotonic() - started
        return self._answered(messages, tools, [reply], started)[0]

    async def complete_choices(
        self,
        messages: Sequence[dict[str, Any]],
        sampling: Sampling,
        *,
        tools: list[dict] | None = None,
        stop: Sequence[str] | None = None,
        watch: Callable[[], StreamWatch] | None = None,
    ) -> list[ModelReply]:
        """`sampling.n` replies to one request (fewer where `n` is ignored); streamed, each with a `watch()`,
        and closed once every reply has finished or been cut; the prompt's tokens go with the first."""
        started = time.monotonic()
        kwargs = self._request(messages, tools, stop, sampling)
        try:
            replies = await self._choices(kwargs, sampling.n, watch, messages, tools)
        except openai.APIError as error:
            raise self._explain(error, tools is not None, 0) from None
        except Stalled as stalled:
            raise self._explain(stalled, tools is not None, 0) from None
        except (ValueError, UnicodeError) as error:
            raise ModelError(
                f"the model at {self.base_url} sent a reply that is not JSON ({short_error(error)})"
            ) from None
        except MalformedReply as malformed:
            raise ModelError(f"the model at {self.base_url} sent {malformed}") from None
        finally:
            self.seconds += time.monotonic() - started
        return self._answered(messages, tools, replies, started)

    def _answered(
        self,
        messages: Sequence[dict[str, Any]],
        tools: list[dict] | None,
        replies: list[ModelReply],
        started: float,
    ) -> list[ModelReply]:
        """The replies, the first with the seconds the request took; the request counted in the tally and
        told to `on_request` (the transcript's per-request record)."""
        seconds = time.monotonic() - started
        replies = [replace(replies[0], seconds=seconds), *replies[1:]] if replies else replies
        request = AnsweredRequest(tuple(messages), tools, tuple(replies), seconds)
        self.tally.add(request)
        if self.on_request is not None:
            try:
                self.on_request(request)
            except Exception:  # a record that cannot be written must not end the run
                log.exception("recording a model request failed")
        return replies

    async def _choices(
        self, kwargs: dict[str, Any], n: int, watch: Watches, messages: Sequence[dict[str, Any]], tools: Any
    ) -> list[ModelReply]:
        """The replies to one request, sent again once when the server closed the connection unanswered."""
        try:
            return await self._choices_once(kwargs, n, watch, messages, tools)
        except openai.APIConnectionError as error:
            if not closed_before_answering(error):
                raise
        log.info("the model server closed an idle connection; sending the request again")
        return await self._choices_once(kwargs, n, watch, messages, tools)

    async def _choices_once(
        self, kwargs: dict[str, Any], n: int, watch: Watches, messages: Sequence[dict[str, Any]], tools: Any
    ) -> list[ModelReply]:
        if self.stream:
            return await self._choices_streamed(kwargs, n, watch, messages, tools)
        return replies_from_completion(await self._client.chat.completions.create(**kwargs))

    async def _choices_streamed(
        self, kwargs: dict[str, Any], n: int, watch: Watches, messages: Sequence[dict[str, Any]], tools: Any
    ) -> list[ModelReply]:
        try:
            stream = await self._client.chat.completions.create(
                **kwargs, stream=True, stream_options={"include_usage": True}
            )
        except openai.APITimeoutError:
            raise Stalled(False) from None
        choices = StreamedChoices(n, watch)
        async with contextlib.aclosing(stream_chunks(stream, self.timeout, self.stall_timeout)) as chunks:
            async for chunk in chunks:
                choices.add(chunk)
                if choices.over:
                    break
        if not choices.answered:
            raise MalformedReply("no chat completion chunks")
        return choices.replies(messages, tools, self._prompt_ratio)

    async def _complete_retried(
        self,
        messages: Sequence[dict[str, Any]],
        tools: list[dict] | None,
        stop: Sequence[str] | None,
        watch: StreamWatch | None = None,
        sampling: Sampling | None = None,
    ) -> ModelReply:
        attempt = 0
        started = time.monotonic()
        while True:
            try:
                return await self._complete_once(messages, tools, stop, watch, sampling)
            except openai.BadRequestError as error:
                if self.max_output_tokens is None or "max_tokens" not in error_message(error):
                    raise self._explain(error, tools is not None, attempt) from None
                self.max_output_tokens = None  # an endpoint that rejects max_tokens: leave it out from now on
                continue
            except (Stalled, openai.APIConnectionError, openai.APIStatusError) as failure:
                error: Exception = failure
            except MalformedReply as malformed:
                raise ModelError(
                    f"the model at {self.base_url} sent {malformed} — is baseUrl an "
                    "OpenAI-compatible endpoint (ending in /v1)?"
                ) from None
            except openai.APIError as failure:  # an error object inside a 200 stream
                raise ModelError(
                    f"the model at {self.base_url} reported an error in its answer: {short_error(failure)}"
                ) from None
            retryable, limit = self._retries_for(error)
            delay = self._retry_delay(error, attempt)
            spent = time.monotonic() - started
            if not retryable or attempt >= limit or spent + delay > self.retry_window:
                raise self._explain(error, tools is not None, attempt, spent) from None
            log.info("model call failed (%s); retrying in %.1fs", short_error(error), delay)
            attempt += 1
            await asyncio.sleep(delay)

    def _request(
        self,
        messages: Sequence[dict[str, Any]],
        tools: list[dict] | None,
        stop: Sequence[str] | None,
        sampling: Sampling | None = None,
    ) -> dict[str, Any]:
        """The chat completion request's arguments (left out when empty)."""
        kwargs: dict[str, Any] = {"model": self.model, "messages": list(messages)}
        if self.temperature is not None:
            kwargs["temperature"] = self.temperature
        if sampling is not None:
            kwargs.update(sampling.request())
        if tools:
            kwargs["tools"] = tools
        if stop:
            kwargs["stop"] = list(stop)
        if self.max_output_tokens:
            kwargs["max_tokens"] = min(
                kwargs.get("max_tokens", self.max_output_tokens), self.max_output_tokens
            )
        return kwargs

    async def _complete_once(
        self,
        messages: Sequence[dict[str, Any]],
        tools: list[dict] | None,
        stop: Sequence[str] | None,
        watch: StreamWatch | None = None,
        sampling: Sampling | None = None,
    ) -> ModelReply:
        kwargs = self._request(messages, tools, stop, sampling)
        if not self.stream:
            try:
                response = await self._client.chat.completions.create(**kwargs)
            except openai.APITimeoutError:
                raise Stalled(False) from None
            except (ValueError, UnicodeError) as error:  # a body that is not JSON
                raise MalformedReply(f"a reply that is not JSON ({short_error(error)})") from None
            return reply_from_completion(response)
        try:
            stream = await self._client.chat.completions.create(
                **kwargs, stream=True, stream_options={"include_usage": True}
            )
        except openai.APITimeoutError:
            raise Stalled(False) from None
        streamed = StreamedReply(watch)
        async with contextlib.aclosing(stream_chunks(stream, self.timeout, self.stall_timeout)) as chunks:
            async for chunk in chunks:
                streamed.add(chunk)
                if streamed.cut is not None:
                    break
        if not streamed.answered:
            kind = stream.response.headers.get("content-type", "no content type").split(";")[0]
            raise MalformedReply(
                f"no chat completion chunks (a {stream.response.status_code} answer of type {kind})"
            )
        reply = streamed.reply(messages, tools, self._prompt_ratio)
        if not reply.estimated:
            self._prompt_ratio = reply.prompt_tokens / max(1, prompt_chars(messages, tools))
        return reply

    async def choose(
        self, messages: Sequence[dict[str, Any]], most_tokens: int = 3
    ) -> tuple[str, dict[str, float]]:
        """A short answer (a number, say), not streamed, and its first token's top logprobs where the
        endpoint sends them (empty where it does not, or refuses `logprobs`)."""
        kwargs = self._request(messages, None, None, Sampling(0.0, max_tokens=most_tokens))
        started = time.monotonic()
        try:
            try:
                response = await self._client.chat.completions.create(**kwargs, logprobs=True, top_logprobs=5)
            except openai.BadRequestError:
                response = await self._client.chat.completions.create(**kwargs)
        except openai.APIError as error:
            raise self._explain(error, False, 0) from None
        except (ValueError, UnicodeError) as error:
            said = short_error(error)
            raise ModelError(f"the model at {self.base_url} sent a reply that is not JSON ({said})") from None
        finally:
            self.seconds += time.monotonic() - started
        choice = response.choices[0] if getattr(response, "choices", None) else None
        if choice is None:
            raise ModelError(f"the model at {self.base_url} sent a chat completion with no choices")
        with contextlib.suppress(MalformedReply):  # counted and recorded like any request, where it reads
            self._answered(messages, None, [reply_from_completion(response)], started)
        return choice.message.content or "", first_token_logprobs(choice)

    async def complete_line(self, prompt: str, most_tokens: int = 48) -> str:
        """What the model writes on from `prompt` to the end of the line (the legacy completions route,
        temperature 0); ModelError where the endpoint has none (a chat-only hosted model)."""
        started = time.monotonic()
        try:
            response = await self._client.completions.create(
                model=self.model, prompt=prompt, max_tokens=most_tokens, temperature=0.0, stop=["\n"]
            )
            reply = text_completion_reply(response)
        except (openai.APIError, ValueError, AttributeError) as error:
            raise ModelError(f"no text completion from {self.base_url}: {short_error(error)}") from None
        finally:
            self.seconds += time.monotonic() - started
        self._answered(({"role": COMPLETION_ROLE, "content": prompt},), None, [reply], started)
        return reply.content

    def _retries_for(self, error: Exception) -> tuple[bool, int]:
        """Whether a failed call is worth another try, and how many tries it gets at most."""
        if isinstance(error, Stalled):
            return True, min(self.max_retries, MAX_STALL_RETRIES)
        retryable = isinstance(error, openai.APIConnectionError) or (
            getattr(error, "status_code", 0) in RETRYABLE_STATUS
        )
        # a refused connection is rarely transient: give up sooner than on a 5xx or a dropped stream
        limit = min(self.max_retries, 2) if refused_connection(error) else self.max_retries
        if isinstance(error, openai.APITimeoutError):
            limit = min(limit, MAX_STALL_RETRIES)
        return retryable, limit

    def _retry_delay(self, error: Exception, attempt: int) -> float:
        response = getattr(error, "response", None)
        header = response.headers.get("retry-after") if response is not None else None
        with contextlib.suppress(TypeError, ValueError):  # no header (None), or not a number of seconds
            return min(max(float(header), 0.0), 60.0)
        return min(self.backoff * (2**attempt), 30.0)

    def _explain(self, error: Exception, sent_tools: bool, retries: int, spent: float = 0.0) -> ModelError:
        endpoint = Endpoint(self.base_url, self.model, self.timeout, self.stall_timeout)
        return explain(error, endpoint, sent_tools, retries, spent)
