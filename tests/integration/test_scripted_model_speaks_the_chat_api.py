"""The scripted model server speaks OpenAI's chat API to the real openai client, faults included."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest

from scripted_model import ScriptedModelServer, ScriptError

MESSAGES: list[Any] = [{"role": "user", "content": "fix tests/test_x.py::test_y"}]
TOOLS: list[Any] = [
    {
        "type": "function",
        "function": {"name": "submit", "parameters": {"type": "object", "properties": {"summary": {}}}},
    }
]


def client(server: ScriptedModelServer, **kwargs: Any) -> openai.AsyncOpenAI:
    kwargs.setdefault("max_retries", 0)
    return openai.AsyncOpenAI(base_url=server.base_url, api_key="test-key", **kwargs)


def http(url: str, payload: Any = None) -> tuple[str, Any]:
    """Plain HTTP to the server (GET, or POST of JSON): the Content-Type and the decoded body."""
    data = None if payload is None else json.dumps(payload).encode()
    with urllib.request.urlopen(urllib.request.Request(url, data=data), timeout=5) as response:
        return response.headers["Content-Type"], json.load(response)


async def collect(stream: Any) -> list[Any]:
    return [chunk async for chunk in stream]


async def test_non_stream_text_answer_with_usage(scripted_model: Any) -> None:
    server = scripted_model([{"content": "Thought: read the test first."}])
    reply = await client(server).chat.completions.create(model="scripted", messages=MESSAGES)
    assert reply.choices[0].message.content == "Thought: read the test first."
    assert reply.choices[0].finish_reason == "stop"
    assert reply.usage is not None and reply.usage.prompt_tokens == len(json.dumps(MESSAGES)) // 4
    assert reply.usage.completion_tokens > 0
    assert server.requests == [{"model": "scripted", "messages": MESSAGES}]


async def test_models_lists_the_script_model(scripted_model: Any) -> None:
    server = scripted_model({"model": "qwen-test", "turns": []})
    models = await client(server).models.list()
    assert [m.id for m in models.data] == ["qwen-test"]


async def test_stream_sends_content_in_small_deltas_and_usage_last(scripted_model: Any) -> None:
    text = "The assertion compares 120 with 24, so the loop stops one short."
    server = scripted_model([{"content": text}])
    stream = await client(server).chat.completions.create(
        model="m", messages=MESSAGES, stream=True, stream_options={"include_usage": True}
    )
    chunks = await collect(stream)
    deltas = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert len(deltas) >= 3 and "".join(deltas) == text
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finishes == ["stop"]
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens > 0


async def test_stream_without_include_usage_has_no_usage(scripted_model: Any) -> None:
    server = scripted_model([{"content": "hi"}])
    chunks = await collect(
        await client(server).chat.completions.create(model="m", messages=MESSAGES, stream=True)
    )
    assert all(c.usage is None for c in chunks)


async def test_stream_splits_tool_call_arguments_across_chunks(scripted_model: Any) -> None:
    arguments = {"path": "src/calc/mathutils.py", "old_text": "range(1, n)", "new_text": "range(1, n + 1)"}
    server = scripted_model(
        [
            {
                "content": "Fixing the range.",
                "tool_calls": [
                    {"name": "edit_file", "arguments": arguments},
                    {"name": "run_tests", "arguments": {}},
                ],
            }
        ]
    )
    stream = await client(server).chat.completions.create(
        model="m", messages=MESSAGES, stream=True, tools=TOOLS
    )
    chunks = await collect(stream)
    calls: dict[int, dict[str, Any]] = {}
    argument_chunks = 0
    for chunk in chunks:
        for call in chunk.choices[0].delta.tool_calls or []:
            entry = calls.setdefault(call.index, {"id": None, "name": "", "arguments": ""})
            entry["id"] = call.id or entry["id"]
            if call.function and call.function.name:
                entry["name"] += call.function.name
            if call.function and call.function.arguments:
                entry["arguments"] += call.function.arguments
                argument_chunks += call.index == 0
    assert argument_chunks >= 3
    assert calls[0] == {"id": "call_1", "name": "edit_file", "arguments": json.dumps(arguments)}
    assert calls[1] == {"id": "call_2", "name": "run_tests", "arguments": "{}"}
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


async def test_non_stream_tool_calls_keep_raw_argument_strings(scripted_model: Any) -> None:
    server = scripted_model([{"tool_calls": [{"name": "read_file", "arguments": '{"path": "a.py"'}]}])
    reply = await client(server).chat.completions.create(model="m", messages=MESSAGES, tools=TOOLS)
    call = reply.choices[0].message.tool_calls[0]
    assert (call.id, call.function.name, call.function.arguments) == (
        "call_1",
        "read_file",
        '{"path": "a.py"',
    )
    assert reply.choices[0].finish_reason == "tool_calls"


async def test_500_consumes_its_turn_so_a_retry_gets_the_next(scripted_model: Any) -> None:
    server = scripted_model([{"fault": "500"}, {"content": "recovered"}, {"fault": "500"}])
    reply = await client(server, max_retries=1).chat.completions.create(model="m", messages=MESSAGES)
    assert reply.choices[0].message.content == "recovered"
    assert len(server.requests) == 2
    with pytest.raises(openai.InternalServerError):
        await client(server).chat.completions.create(model="m", messages=MESSAGES)


async def test_429_carries_retry_after(scripted_model: Any) -> None:
    server = scripted_model([{"fault": "429", "retry_after": 0.2}, {"fault": "429", "retry_after": 0.2}, {}])
    with pytest.raises(openai.RateLimitError) as raised:
        await client(server).chat.completions.create(model="m", messages=MESSAGES)
    assert raised.value.response.headers["retry-after"] == "0.2"
    started = time.monotonic()
    await client(server, max_retries=1).chat.completions.create(model="m", messages=MESSAGES)
    assert time.monotonic() - started >= 0.2


@pytest.mark.parametrize(
    ("fault", "error", "needle"),
    [
        ("400_tools", openai.BadRequestError, "tools are not supported by this model"),
        ("401", openai.AuthenticationError, "Incorrect API key"),
        ("404_model", openai.NotFoundError, "The model `m` does not exist"),
    ],
)
async def test_client_errors(scripted_model: Any, fault: str, error: type[Exception], needle: str) -> None:
    server = scripted_model([{"fault": fault}])
    with pytest.raises(error) as raised:
        await client(server).chat.completions.create(model="m", messages=MESSAGES, tools=TOOLS)
    assert needle in str(raised.value)


async def test_stall_times_out_the_client_and_stop_is_quick(scripted_model: Any) -> None:
    server = scripted_model([{"fault": "stall", "seconds": 30}])
    with pytest.raises(openai.APITimeoutError):
        await client(server, timeout=0.5).chat.completions.create(model="m", messages=MESSAGES)
    started = time.monotonic()
    server.stop()
    assert time.monotonic() - started < 2


async def test_drop_breaks_the_stream_midway(scripted_model: Any) -> None:
    server = scripted_model([{"fault": "drop"}, {"fault": "drop"}, {"content": "still serving"}])
    received: list[Any] = []
    with pytest.raises((openai.APIConnectionError, httpx2.HTTPError)):
        stream = await client(server).chat.completions.create(model="m", messages=MESSAGES, stream=True)
        async for chunk in stream:
            received.append(chunk)
    assert 1 <= len(received) <= 3
    with pytest.raises(openai.APIConnectionError):
        await client(server).chat.completions.create(model="m", messages=MESSAGES)
    reply = await client(server).chat.completions.create(model="m", messages=MESSAGES)
    assert reply.choices[0].message.content == "still serving"


async def test_refusal_stream_and_non_stream(scripted_model: Any) -> None:
    server = scripted_model([{"refusal": "I can't help with that"}, {"refusal": "I can't help with that"}])
    reply = await client(server).chat.completions.create(model="m", messages=MESSAGES)
    assert reply.choices[0].message.refusal == "I can't help with that"
    assert reply.choices[0].message.content is None
    chunks = await collect(
        await client(server).chat.completions.create(model="m", messages=MESSAGES, stream=True)
    )
    assert "".join(c.choices[0].delta.refusal or "" for c in chunks) == "I can't help with that"


async def test_finish_reason_override_and_stop_sequences(scripted_model: Any) -> None:
    server = scripted_model(
        [
            {"content": "cut short", "finish_reason": "length"},
            {"content": "Action: read_file\nAction Input: {}\nObservation: invented"},
        ]
    )
    reply = await client(server).chat.completions.create(model="m", messages=MESSAGES)
    assert reply.choices[0].finish_reason == "length"
    reply = await client(server).chat.completions.create(model="m", messages=MESSAGES, stop=["Observation:"])
    assert reply.choices[0].message.content == "Action: read_file\nAction Input: {}\n"
    assert reply.choices[0].finish_reason == "stop"


async def test_unmet_expectation_is_a_loud_500_that_keeps_the_turn(scripted_model: Any) -> None:
    server = scripted_model([{"content": "ok", "expect": {"last_message_contains": "Observation: 1 passed"}}])
    with pytest.raises(openai.InternalServerError) as raised:
        await client(server, max_retries=2).chat.completions.create(model="m", messages=MESSAGES)
    assert "expected the last message to contain 'Observation: 1 passed'" in str(raised.value)
    assert len(server.requests) == 1  # x-should-retry: false stops the SDK from retrying
    assert len(server.failures) == 1
    messages = [*MESSAGES, {"role": "tool", "tool_call_id": "call_1", "content": "Observation: 1 passed"}]
    reply = await client(server).chat.completions.create(model="m", messages=messages)
    assert reply.choices[0].message.content == "ok"


async def test_exhausted_script_submits_or_errors(scripted_model: Any) -> None:
    server = scripted_model([])
    reply = await client(server).chat.completions.create(model="m", messages=MESSAGES, tools=TOOLS)
    call = reply.choices[0].message.tool_calls[0]
    assert (call.function.name, json.loads(call.function.arguments)) == (
        "submit",
        {"summary": "script exhausted"},
    )
    reply = await client(server).chat.completions.create(model="m", messages=MESSAGES)
    assert "Action: submit" in reply.choices[0].message.content
    strict = scripted_model({"turns": [], "on_exhausted": "error"})
    with pytest.raises(openai.InternalServerError, match="script exhausted"):
        await client(strict).chat.completions.create(model="m", messages=MESSAGES)


async def test_delay_and_forced_stream_mode(scripted_model: Any) -> None:
    server = scripted_model([{"content": "slow", "delay": 0.3}, {"content": "plain", "stream": False}])
    started = time.monotonic()
    await client(server).chat.completions.create(model="m", messages=MESSAGES)
    assert time.monotonic() - started >= 0.3
    body = {"model": "m", "messages": MESSAGES, "stream": True}
    content_type, reply = http(f"{server.base_url}/chat/completions", body)
    assert content_type == "application/json"
    assert reply["choices"][0]["message"]["content"] == "plain"


async def test_requests_endpoint_and_added_turns(scripted_model: Any) -> None:
    server = scripted_model([])
    server.add_turns([{"content": "first"}])
    assert http(f"http://127.0.0.1:{server.port}/_fixloop/turns", {"content": "second"})[1] == {
        "remaining": 2
    }
    for expected in ("first", "second"):
        reply = await client(server).chat.completions.create(model="m", messages=MESSAGES)
        assert reply.choices[0].message.content == expected
    bodies = http(f"http://127.0.0.1:{server.port}/_fixloop/requests")[1]
    assert [body["messages"] for body in bodies] == [MESSAGES, MESSAGES]


async def test_client_disconnect_mid_stream_does_not_hurt_the_server(scripted_model: Any) -> None:
    server = scripted_model([{"content": "x" * 200}, {"content": "next"}])
    stream = await client(server).chat.completions.create(model="m", messages=MESSAGES, stream=True)
    async for _ in stream:
        break
    await stream.close()
    reply = await client(server).chat.completions.create(model="m", messages=MESSAGES)
    assert reply.choices[0].message.content == "next"


def test_bad_scripts_are_named() -> None:
    with pytest.raises(ScriptError, match="unknown fault"):
        ScriptedModelServer([{"fault": "503"}])
    with pytest.raises(ScriptError, match=r"turn 1: unknown keys \['contents'\]"):
        ScriptedModelServer([{"content": "a"}, {"contents": "b"}])


def test_runs_as_a_module(tmp_path: Any) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"model": "cli-model", "turns": [{"content": "from the cli"}]}))
    process = subprocess.Popen(
        [sys.executable, "-m", "scripted_model", "--script", str(script)],
        cwd=Path(__file__).parents[1],  # tests/, where the scripted_model package lives
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        sync = openai.OpenAI(base_url=base_url, api_key="k", max_retries=0)
        reply = sync.chat.completions.create(model="cli-model", messages=MESSAGES)
        assert reply.choices[0].message.content == "from the cli"
        with urllib.request.urlopen(
            base_url.removesuffix("/v1") + "/_fixloop/requests", timeout=5
        ) as response:
            assert len(json.load(response)) == 1
    finally:
        process.terminate()
        assert process.wait(timeout=5) == 0
    assert "request #1" in (process.stderr.read() if process.stderr else "")


async def test_chunk_delay_spreads_the_stream_and_state_reports_progress(scripted_model: Any) -> None:
    server = scripted_model([{"content": "one two three four", "chunk_delay": 0.05}, {"content": "left"}])
    started = time.monotonic()  # before the request: the first chunks may arrive with the headers
    stream = await client(server).chat.completions.create(model="m", messages=MESSAGES, stream=True)
    chunks = await collect(stream)
    assert time.monotonic() - started >= 0.05 * (len(chunks) - 1)
    state = http(f"http://127.0.0.1:{server.port}/_fixloop/state")[1]
    assert state == {"served": 1, "remaining": 1, "requests": 1, "failures": []}


async def test_text_completions_answer_from_the_scripts_lines_and_404_without_them(scripted_model) -> None:
    lines = [{"after": "    return year", "text": " % 4 == 0"}]
    server = scripted_model({"turns": [], "lines": lines})
    async with client(server) as api:
        done = await api.completions.create(
            model="scripted", prompt="def f(year):\n    return year ", max_tokens=9
        )
        other = await api.completions.create(model="scripted", prompt="x = ", max_tokens=9)
    assert done.choices[0].text == " % 4 == 0" and other.choices[0].text == ""
    assert [body["prompt"] for body in server.text_requests] == ["def f(year):\n    return year ", "x = "]
    assert server.requests == []  # no chat turn was consumed

    chat_only = scripted_model([])
    async with client(chat_only) as api:
        with pytest.raises(openai.NotFoundError, match="not supported in the v1/completions endpoint"):
            await api.completions.create(model="scripted", prompt="x = ", max_tokens=9)
    with pytest.raises(ScriptError, match="lines is a list of"):
        ScriptedModelServer({"turns": [], "lines": [{"after": "x"}]})
