"""A local endpoint's prompt cache is warmed once per run with the fixed prefix (system prompt and tools,
`max_tokens: 1`), and that prefix is byte for byte the start of every request, in every run and turn."""

from __future__ import annotations

import json

import pytest

from fixloop.model.warm_up import is_local_endpoint
from support import fix_script, text_fix_script


def prefix(body: dict) -> str:
    """The bytes a prompt cache keeps: the system message and the tool schemas, as sent."""
    return json.dumps([body["messages"][0], body.get("tools")], ensure_ascii=False)


async def test_the_warm_up_sends_the_prefix_the_turns_begin_with(run_fix) -> None:
    demo = await run_fix("demo", text_fix_script("demo", "json_fence"))
    other = await run_fix("easy_compare", fix_script("easy_compare"))
    assert demo.result.status == other.result.status == "fixed"
    for outcome in (demo, other):
        (warm,) = outcome.server.warmups  # once per run, concurrent with the copy and the baseline
        assert warm["max_tokens"] == 1 and not warm.get("stream")
        assert [m["role"] for m in warm["messages"]] == ["system"]
        assert warm["tools"] and warm["tools"] == outcome.server.requests[0]["tools"]
    bodies = [*demo.server.warmups, *demo.server.requests, *other.server.warmups, *other.server.requests]
    assert len({prefix(body) for body in bodies}) == 1  # the same bytes across runs and turns


async def test_the_text_protocol_warms_its_own_prefix(run_fix) -> None:
    outcome = await run_fix("demo", text_fix_script("demo", "react"), protocol="text")
    (warm,) = outcome.server.warmups
    assert "tools" not in warm and "Tools:" in warm["messages"][0]["content"]
    assert {prefix(body) for body in outcome.server.requests} == {prefix(warm)}


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("http://127.0.0.1:8811/v1", True),
        ("http://localhost:1234/v1", True),
        ("http://[::1]:80/v1", True),
        ("https://api.openai.com/v1", False),
        ("http://192.168.1.20:8000/v1", False),
    ],
)
def test_only_endpoints_on_this_machine_are_warmed(url: str, local: bool) -> None:
    assert is_local_endpoint(url) is local


async def test_a_run_that_starts_with_a_code_round_warms_the_prefix_without_schemas(run_fix) -> None:
    body = "    result = 1\n    for i in range(2, n + 1):\n        result *= i\n    return result\n"
    fixed = f"mathutils.py\n```python\ndef factorial(n: int) -> int:\n{body}```\n"
    outcome = await run_fix("demo", [{"content": fixed}], strategy="sample", editForm="code", samples=2)
    assert outcome.result.status == "fixed", outcome.notices
    (warm,) = outcome.server.warmups
    first = outcome.server.requests[0]
    assert "tools" not in warm and "tools" not in first  # the code round reads no schemas
    assert prefix(warm) == prefix(first)
