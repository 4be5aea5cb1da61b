"""The loop understands native tool calls, the ReAct text protocol and calls written into content."""

from __future__ import annotations

import pytest

from fixloop.events import Action, Notice, ThoughtDelta
from support import fix_script, text_fix_script


@pytest.mark.parametrize("stream", [True, False])
async def test_native_tool_calls_fix_the_demo(run_fix, stream):
    outcome = await run_fix("demo", fix_script("demo"), stream=stream)
    assert outcome.result.status == "fixed", outcome.result.reasons
    assert all(bool(body.get("stream")) == stream for body in outcome.server.requests)
    assert outcome.result.files and outcome.result.diff.startswith("--- a/")
    tools = [a.tool for a in outcome.of(Action)]
    assert tools[-1] == "submit" and "edit_file" in tools
    # native calls are offered as `tools` on every request and never need the text protocol
    assert all(body.get("tools") for body in outcome.server.requests)
    assert not any("text protocol" in n or "as text" in n for n in outcome.notices)


async def test_thoughts_are_streamed_as_deltas(run_fix):
    outcome = await run_fix("demo", fix_script("demo"))
    deltas = "".join(e.text for e in outcome.of(ThoughtDelta) if e.step == 1)
    assert "let me read it" in deltas


async def test_react_text_protocol_fixes_the_demo(run_fix):
    outcome = await run_fix("demo", text_fix_script("demo", "react"), protocol="text")
    assert outcome.result.status == "fixed", outcome.result.reasons
    first = outcome.server.requests[0]
    assert "tools" not in first  # text protocol: tools are described in the prompt instead
    assert "```json" in first["messages"][0]["content"]
    assert "\nObservation:" in (first.get("stop") or [])
    # observations go back as user messages in the ReAct form
    assert outcome.server.requests[1]["messages"][-1]["content"].startswith("Observation:")


@pytest.mark.parametrize("style", ["tool_call_tag", "json_fence", "react"])
async def test_auto_switches_when_actions_come_as_text(run_fix, style):
    outcome = await run_fix("demo", text_fix_script("demo", style))
    assert outcome.result.status == "fixed", outcome.result.reasons
    switches = [n for n in outcome.notices if "tool calls as text" in n]
    assert len(switches) == 1  # said once in the trace, then kept for the run
    # the prompt prefix stays stable: the same system prompt and tools on every request
    assert all(body.get("tools") for body in outcome.server.requests)
    systems = {body["messages"][0]["content"] for body in outcome.server.requests}
    assert len(systems) == 1


async def test_auto_switches_to_text_protocol_on_http_400_about_tools(run_fix):
    script = [{"fault": "400_tools"}, *text_fix_script("demo", "react")]
    outcome = await run_fix("demo", script)
    assert outcome.result.status == "fixed", outcome.result.reasons
    assert any("switching to the text protocol" in n for n in outcome.notices)
    assert outcome.server.requests[0].get("tools")
    assert all("tools" not in body for body in outcome.server.requests[1:])


async def test_explicit_tools_protocol_does_not_read_calls_from_text(run_fix):
    script = [*text_fix_script("demo", "json_fence")[:1], *fix_script("demo")]
    outcome = await run_fix("demo", script, protocol="tools")
    assert outcome.result.status == "fixed"
    assert not any(isinstance(e, Notice) and e.kind == "protocol" for e in outcome.events)
    assert any("did not call a tool" in str(m.get("content")) for m in outcome.server.requests[1]["messages"])


async def test_compact_tool_schemas_for_small_models(run_fix):
    outcome = await run_fix("demo", fix_script("demo"), compactTools=True)
    assert outcome.result.status == "fixed"
    tools = outcome.server.requests[0]["tools"]
    edit = next(t["function"] for t in tools if t["function"]["name"] == "edit_file")
    assert len(edit["description"]) < 120
    assert all("description" not in spec for spec in edit["parameters"]["properties"].values())
    assert set(edit["parameters"]["required"]) == {"path", "old_text", "new_text"}
