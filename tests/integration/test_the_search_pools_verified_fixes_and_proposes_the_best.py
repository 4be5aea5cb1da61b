"""One search, one pool: a one-token change and a model's candidate both verify; the model's is proposed
(nothing else speaks for the mechanical one), the pool and each entry's origin travel in the result, and
"try another fix" proposes the pool's next fix, verified again, without asking the model. Naturalness puts
a one-token change the model writes itself first, and says "not scored" where the endpoint has no text
completions."""

from __future__ import annotations

from pathlib import Path

from fixloop.agent.written_checks import SYSTEM as CHECKS_SYSTEM
from fixloop.config import load_settings
from fixloop.engine import FixRequest, FixRun, PreviousRun
from fixloop.events import Notice
from fixloop.transcript import read_transcript
from support import load_fix

DEF = "def factorial(n: int) -> int:\n    # n! = 1 * 2 * ... * n, and factorial(0) == 1\n"
REWRITE = (
    "The bug is in factorial.\n\nmathutils.py\n```python\n"
    + DEF
    + "    result = 1\n    for i in range(1, n + 1):\n        result = result * i\n    return result\n```\n"
)
SEARCH = {"strategy": "sample", "editForm": "code", "samples": 2, "sampleRounds": 0, "temperature": 0}


async def fix(root, server, previous=None, **overrides):
    env = {"FIXLOOP_BASE_URL": server.base_url, "FIXLOOP_MODEL": "scripted", "FIXLOOP_API_KEY": "none"}
    settings = load_settings(root, {"testTimeout": 20, **SEARCH, **overrides}, env=env)
    events = []
    request = FixRequest(root, tuple(load_fix("demo")["test_ids"]), previous=previous)
    run = FixRun(request, settings, events.append)
    result = await run.execute()
    return run, result, [e.text for e in events if isinstance(e, Notice)]


async def test_a_model_candidate_is_proposed_over_a_one_token_change_and_the_other_comes_next(
    fixture_project, scripted_model
):
    root = fixture_project("demo")
    server = scripted_model([{"content": REWRITE}, {"content": REWRITE}])

    run, result, notices = await fix(root, server, mutants=True, poolSize=2)

    assert result.status == "fixed", notices
    assert "result = result * i" in result.diff  # the model's rewrite, not the one-token `*=`
    assert "— from the model's candidates (first round)" in result.summary
    assert result.summary.endswith("(1 other verified fix(es) in the pool)")
    pool = result.to_json()["pool"]
    assert [entry["mechanical"] for entry in pool] == [False, True]
    assert "+        result *= i" in pool[1]["diff"] and pool[1]["origin"].startswith("a one-token change")
    # the scripted endpoint has no text completions (404, as a chat-only hosted model): naturalness says so
    assert server.text_requests
    said = [entry["evidence"]["naturalness"] for entry in pool]
    assert all(isinstance(one, str) and one.startswith("not scored: no text completion from") for one in said)
    ranked = "2 verified fix(es), ranked: 1. the model's candidates"
    assert any(n.startswith(ranked) for n in notices), notices
    assert (root / "mathutils.py").read_text().count("result += i") == 1  # the user's file, untouched
    # the result's token figures count every request of the run, the ranking's and completions' too
    requests = [r for r in read_transcript(Path(result.transcript)) if r["type"] == "request"]
    usage = result.to_json()["usage"]
    assert usage["requests"] == len(requests)
    assert usage["promptTokens"] == sum(r["prompt_tokens"] for r in requests) > 0
    assert usage["completionTokens"] == sum(r["completion_tokens"] for r in requests)

    again_server = scripted_model([])
    previous = PreviousRun(run.conversation, run.proposal, "the user rejected it", run.pool[1:])
    _, again, notices = await fix(root, again_server, previous=previous, mutants=True, poolSize=2)

    assert again.status == "fixed", notices
    assert "+        result *= i" in again.diff
    assert again.summary.startswith("passes the tests; check the logic — a one-token change found by")
    assert again.summary.endswith("(the next fix of the pool, verified again)")
    assert not again_server.requests  # the pool's next fix needed no model


async def test_by_default_the_search_goes_on_after_its_first_verified_fix(fixture_project, scripted_model):
    root = fixture_project("demo")
    server = scripted_model([{"content": REWRITE}, {"content": REWRITE}])

    _, result, notices = await fix(root, server, mutants=True)

    assert result.status == "fixed", notices
    assert any(n.startswith("verified fix 1 (a one-token change") for n in notices), notices
    assert any(n.startswith("verified fix 2 (the model's candidates") for n in notices), notices
    assert server.requests  # the model was asked after the one-token change had verified


async def test_pool_share_zero_ends_the_search_at_the_first_verified_fix(fixture_project, scripted_model):
    root = fixture_project("demo")
    server = scripted_model([{"content": REWRITE}])

    _, result, notices = await fix(root, server, mutants=True, poolShare=0)

    assert result.status == "fixed", notices
    assert "+        result *= i" in result.diff
    assert len(result.to_json()["pool"]) == 1
    # no candidate round: the one request asks for checks to weigh the lone mechanical fix
    assert [r["messages"][0]["content"] for r in server.requests] == [CHECKS_SYSTEM]


async def test_a_one_token_change_the_model_writes_itself_ranks_above_its_rewrite(
    fixture_project, scripted_model
):
    root = fixture_project("demo")
    # what the model writes on from the start of each changed line (text completions, not chat turns)
    lines = [
        {"after": "        result", "text": " *= i"},
        {"after": "    for i in range(", "text": "2, n + 1):"},
    ]
    server = scripted_model({"turns": [{"content": REWRITE}, {"content": REWRITE}], "lines": lines})

    _, result, notices = await fix(root, server, mutants=True, poolSize=2)

    assert result.status == "fixed", notices
    assert "+        result *= i" in result.diff  # the one-token change, not the model's rewrite
    assert result.summary.startswith("verified fix — a one-token change found by mechanical search")
    first, second = (entry["evidence"]["naturalness"] for entry in result.to_json()["pool"])
    assert first["score"] == 1 and first["lines"] == [{"written": "result *= i", "toward": 1}]
    assert second["score"] < 0  # `range(1, ...)` and `result = result * i`: farther from what it writes
    prompts = [body["prompt"] for body in server.text_requests]
    assert len(prompts) == len(set(prompts))  # weighed as the one-token round ends and in the ranking: once
    assert prompts and all(p.startswith("# mathutils.py\n# Small math helpers.\n") for p in prompts)
    assert all(body["temperature"] == 0 and body["stop"] == ["\n"] for body in server.text_requests)
    # each text completion is a request of the run's figures, like a chat request
    assert result.model_requests == len(server.requests) + len(server.text_requests)
    ranked = next(n for n in notices if n.startswith("2 verified fix(es), ranked: 1. a one-token change"))
    assert "nearer to the line the model writes (`result *= i`, +1 token(s))" in ranked


async def test_a_one_token_change_nothing_speaks_for_leaves_the_model_its_rounds(
    fixture_project, scripted_model
):
    root = fixture_project("demo")
    # the model writes the line as `result = result * i`: the one-token `*=` comes no nearer to it
    lines = [{"after": "        result", "text": " = result * i"}]
    server = scripted_model({"turns": [{"content": REWRITE}, {"content": REWRITE}], "lines": lines})

    # a share so small that, started at the one-token change, it would end the run before the model's round
    _, result, notices = await fix(root, server, mutants=True, poolShare=0.001)

    assert result.status == "fixed", notices
    assert "result = result * i" in result.diff  # the model's rewrite, found after the one-token change
    assert "— from the model's candidates (first round)" in result.summary
    said = "nothing beyond the tests speaks for the one-token change(s) yet: the search goes on for a fix"
    assert any(n.startswith(said) for n in notices), notices
    pool = result.to_json()["pool"]
    assert [entry["mechanical"] for entry in pool] == [False, True]


async def test_a_one_token_change_the_model_writes_starts_the_pools_share_at_once(
    fixture_project, scripted_model
):
    root = fixture_project("demo")
    lines = [{"after": "        result", "text": " *= i"}]
    server = scripted_model({"turns": [{"content": REWRITE}], "lines": lines})

    _, result, notices = await fix(root, server, mutants=True, poolShare=0.001)

    assert result.status == "fixed", notices
    assert "+        result *= i" in result.diff
    assert result.summary.startswith("verified fix — a one-token change found by mechanical search")
    said = (
        "the model writes the line of mathutils.py (`result += i` -> `result *= i`) itself: the search goes"
    )
    assert any(n.startswith(said) for n in notices), notices
