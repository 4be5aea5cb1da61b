"""The chunks of one streamed chat completion, each within its time limit, and the stream closed whole."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import openai

from fixloop.model.replies import MalformedReply, short_error


class Stalled(Exception):
    """A started stream sent nothing for the stall timeout, or an answer took the whole request timeout."""

    def __init__(self, started: bool) -> None:
        super().__init__("stalled")
        self.started = started


async def stream_chunks(stream: Any, first: float, stall: float) -> AsyncIterator[Any]:
    """The stream's chunks, the first within `first` seconds, each next within `stall`; the caller closes
    it (`contextlib.aclosing`), so the server sees the client go and the generators under the stream end
    in this loop, not in the collector (which may run in another thread, or after the loop is gone)."""
    iterator = stream.__aiter__()
    waited = first
    started = False
    try:
        while True:
            try:
                async with asyncio.timeout(waited):
                    chunk = await iterator.__anext__()
            except StopAsyncIteration:
                return
            except (TimeoutError, openai.APITimeoutError):
                raise Stalled(started) from None
            except (ValueError, UnicodeError) as error:  # a line that is not JSON, bytes not UTF-8
                raise MalformedReply(f"a stream line that is not JSON ({short_error(error)})") from None
            started = True
            waited = stall
            yield chunk
    finally:
        try:
            await iterator.aclose()
            # openai's own generator is not closed by closing ours; left suspended, it and httpx's under
            # it wait in a reference cycle with the stream
            inner = getattr(stream, "_iterator", None)
            if inner is not None and hasattr(inner, "aclose"):
                await inner.aclose()
        finally:
            await stream.close()  # whatever the generators did: the server sees the client go
