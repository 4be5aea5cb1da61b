"""Of each request's prompt tokens, the reply says how many the server read anew and how many it found in its
prompt cache, as the server reported them: llama-server's `timings` (`prompt_n`, `cache_n`, in its last
chunk or its completion), a hosted API's `usage.prompt_tokens_details.cached_tokens`; where the server said
nothing (llama-cpp-python sends no timings) both are unknown, never taken to be the whole prompt."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from openai.types.chat import ChatCompletion, ChatCompletionChunk

from fixloop.agent.prompt_parts import prompt_parts, sizes_by_origin
from fixloop.model.replies import StreamedChoices, StreamedReply, prompt_figures, reply_from_completion
from fixloop.model.usage_tally import AnsweredRequest, UsageTally

MESSAGES = [{"role": "user", "content": "x" * 400}]
BASE = {"id": "c1", "created": 1, "model": "m"}


def chunk(choices: list[dict[str, Any]], **extra: Any) -> ChatCompletionChunk:
    """A chunk as the openai package hands it: `timings` (not in its types) kept as an extra field."""
    return ChatCompletionChunk.model_validate(
        {**BASE, "object": "chat.completion.chunk", "choices": choices, **extra}
    )


def text(content: str | None = None, finish: str | None = None, index: int = 0) -> dict[str, Any]:
    return {"index": index, "delta": {"content": content}, "finish_reason": finish}


def usage(prompt: int, completion: int = 5, cached: int | None = None) -> dict[str, Any]:
    figures: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": completion}
    figures["total_tokens"] = prompt + completion
    if cached is not None:
        figures["prompt_tokens_details"] = {"cached_tokens": cached}
    return figures


def streamed(*chunks: ChatCompletionChunk):
    reply = StreamedReply()
    for one in chunks:
        reply.add(one)
    return reply.reply(MESSAGES, None)


def test_llama_servers_timings_in_the_usage_chunk_say_what_it_read_and_what_it_had() -> None:
    timings = {"prompt_n": 120, "prompt_ms": 80.5, "cache_n": 880, "predicted_n": 5}
    reply = streamed(
        chunk([text("fixed")]), chunk([text(finish="stop")]), chunk([], usage=usage(1000), timings=timings)
    )
    assert (reply.prompt_tokens, reply.prompt_processed, reply.prompt_cached) == (1000, 120, 880)


def test_timings_in_the_finish_chunk_count_as_well() -> None:
    reply = streamed(
        chunk([text("a")]),
        chunk([text(finish="stop")], usage=usage(300), timings={"prompt_n": 300, "cache_n": 0}),
    )
    assert (reply.prompt_processed, reply.prompt_cached) == (
        300,
        0,
    )  # a full re-read is 0 cached, not unknown


def test_a_hosted_apis_cached_tokens_give_the_tokens_read_anew() -> None:
    reply = streamed(chunk([text("a", finish="stop")]), chunk([], usage=usage(2000, cached=1536)))
    assert (reply.prompt_tokens, reply.prompt_processed, reply.prompt_cached) == (2000, 464, 1536)


def test_a_server_that_says_nothing_leaves_both_unknown() -> None:
    reply = streamed(chunk([text("a", finish="stop")]), chunk([], usage=usage(700)))
    assert reply.prompt_tokens == 700
    assert reply.prompt_processed is None and reply.prompt_cached is None


def test_a_completion_not_streamed_carries_its_timings_too() -> None:
    message = {"role": "assistant", "content": "ok"}
    body = {
        **BASE,
        "object": "chat.completion",
        "usage": usage(900),
        "timings": {"prompt_n": 40, "cache_n": 860},
    }
    body["choices"] = [{"index": 0, "message": message, "finish_reason": "stop"}]
    reply = reply_from_completion(ChatCompletion.model_validate(body))
    assert (reply.prompt_tokens, reply.prompt_processed, reply.prompt_cached) == (900, 40, 860)


def test_a_batchs_prompt_is_read_once_and_counted_with_its_first_reply() -> None:
    choices = StreamedChoices(2)
    for one in [
        chunk([text("a", index=0), text("b", index=1)]),
        chunk([text(finish="stop", index=1)]),
        chunk([], usage=usage(500, 3), timings={"prompt_n": 20, "cache_n": 480}),
        chunk([text(finish="stop", index=0)]),
        chunk([], usage=usage(500, 4), timings={"prompt_n": 20, "cache_n": 480}),
    ]:
        choices.add(one)
    first, second = choices.replies(MESSAGES, None)
    assert (first.prompt_tokens, first.prompt_processed, first.prompt_cached) == (500, 20, 480)
    assert (second.prompt_tokens, second.prompt_processed, second.prompt_cached) == (0, None, None)


def test_figures_that_are_not_counts_are_dropped() -> None:
    for bad in (-1, True, "12", None, [3]):
        assert prompt_figures(None, {"prompt_n": bad, "cache_n": bad}) == (None, None)
    assert prompt_figures({"prompt_tokens": 10}, {"prompt_n": 4}) == (4, 6)  # one known gives the other


def answered(prompt: int, processed: int | None, cached: int | None, seconds: float = 1.0) -> AnsweredRequest:
    reply = streamed(chunk([text("a", finish="stop")]), chunk([], usage=usage(prompt)))
    reply = replace(reply, prompt_processed=processed, prompt_cached=cached, seconds=seconds)
    return AnsweredRequest(tuple(MESSAGES), None, (reply,), seconds)


def test_the_runs_tally_stays_unknown_until_a_request_reports() -> None:
    tally = UsageTally()
    tally.add(answered(1000, None, None))
    assert (tally.requests, tally.prompt_tokens, tally.prompt_processed, tally.prompt_cached) == (
        1,
        1000,
        None,
        None,
    )
    tally.add(answered(1100, 100, 1000, 2.5))
    assert (tally.requests, tally.prompt_tokens, tally.prompt_processed, tally.prompt_cached) == (
        2,
        2100,
        100,
        1000,
    )
    assert tally.completion_tokens == 10 and tally.seconds == 3.5


def test_each_message_is_sized_by_where_it_comes_from() -> None:
    warm = ("Code under test:\n" + "def f():\n    return 1\n" * 10).strip()  # as the task shows it
    tool_call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "read_file", "arguments": '{"path": "f.py"}'},
    }
    messages = [
        {"role": "system", "content": "rules " * 20},
        {"role": "user", "content": f"The failing test: t.py::test_f\n\n{warm}\n\nFind the bug."},
        {"role": "assistant", "content": "Reading f.", "tool_calls": [tool_call]},
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": "f.py (lines 1-20 of 20)\n```python\n" + "x = 1\n" * 20,
        },
        {"role": "assistant", "content": "Running the tests."},
        {"role": "user", "content": "Observation: 1 failed, 3 passed"},
    ]
    tools = [{"type": "function", "function": {"name": "read_file", "parameters": {}}}]
    parts = prompt_parts(messages, tools, warm)
    assert [(part.role, part.origin) for part in parts] == [
        ("system", "system"),
        ("user", "warm_start"),
        ("user", "task"),
        ("assistant", "history"),
        ("tool", "file_text"),
        ("assistant", "history"),
        ("user", "observation"),
        ("tools", "tools"),
    ]
    sizes = sizes_by_origin(parts)
    assert sizes["warm_start"] == -(-len(warm) // 4)  # characters / 4, rounded up
    assert sizes["system"] == 30 and sizes["observation"] == 8
    assert all(size > 0 for origin, size in sizes.items() if origin != "line_completion")  # a request apart
    assert sizes["line_completion"] == 0
