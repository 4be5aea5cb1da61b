"""A stream the client cuts is closed whole while the event loop runs: none of the openai and httpx
generators under it is left suspended for the garbage collector, which may reach them in another thread
(the scripted server's) or after the loop is gone ("async generator already executing", a
PytestUnraisableExceptionWarning that CI printed)."""

from __future__ import annotations

import asyncio
import gc
import inspect
from collections.abc import Iterator

import pytest

from fixloop.model.client import ChatModel
from fixloop.model.replies import StreamCut
from scripted_model import ScriptedModelServer

BABBLE = "The bug is in factorial. " + "Let me say it once more. " * 200


class CutAtOnce:
    """Cuts the reply at its first piece of text."""

    def on_text(self, delta: str) -> StreamCut | None:
        return StreamCut(len(delta), "enough")

    def on_call(self, index: int, name: str, arguments: str) -> StreamCut | None:
        return None


def suspended_stream_generators() -> list[str]:
    """The names of the async generators of a response stream that have not finished."""
    return [
        obj.__qualname__
        for obj in gc.get_objects()
        if inspect.isasyncgen(obj)
        and obj.ag_frame is not None
        and obj.ag_frame.f_code.co_filename.split("/")[-3:-1] != ["tests", "scripted_model"]
        and any(part in obj.ag_frame.f_code.co_filename for part in ("openai", "httpx"))
    ]


@pytest.fixture
def collector_off() -> Iterator[None]:
    """No collection while the test runs: what is left is left for the collector."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@pytest.mark.usefixtures("collector_off")
async def test_a_cut_stream_leaves_no_suspended_generator() -> None:
    server = ScriptedModelServer([{"content": BABBLE, "chunk_chars": 4, "chunk_delay": 0.002}])
    model = ChatModel(base_url=server.start(), model=server.model, api_key=None)
    try:
        reply = await model.complete([{"role": "user", "content": "fix it"}], watch=CutAtOnce())
        assert reply.cut == "enough" and "once more" not in reply.content
        for _ in range(20):  # the closes the loop was handed run
            await asyncio.sleep(0)
        left = suspended_stream_generators()
        assert left == [], left
    finally:
        await model.close()
        server.stop()
