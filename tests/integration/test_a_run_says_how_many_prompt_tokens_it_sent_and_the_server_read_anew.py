"""A run's result JSON and transcript say how many prompt tokens it sent, how many of them the server read
anew and how many it found in its prompt cache (llama-server's `timings`, a hosted API's `cached_tokens`;
unknown, not "all of them", where the server said nothing), its completion tokens, its requests and their
seconds; each request's transcript record sizes its prompt by origin, and benchmarks/prompt_breakdown.py
prints them as a table."""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Any

import pytest

from fixloop.transcript import read_transcript
from support import fix_script

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "prompt_breakdown.py"
SENT = [1000, 1400, 1500, 1600]  # each request's prompt tokens, as the scripted server reports them
CACHED = [0, 1000, 1400, 1500]  # the prompt before it, found in the cache
READ = [sent - cached for sent, cached in zip(SENT, CACHED, strict=True)]


def reporting(style: str, stream: bool = True) -> list[dict[str, Any]]:
    """easy_compare's fix, each answer reporting its prompt's tokens the way `style`'s servers do."""
    turns = fix_script("easy_compare", stream=stream)
    for turn, sent, cached in zip(turns, SENT, CACHED, strict=True):
        turn["usage"] = {"prompt_tokens": sent}
        if style == "timings":  # llama-server
            turn["timings"] = {
                "prompt_n": sent - cached,
                "prompt_ms": 12.5,
                "cache_n": cached,
                "predicted_n": 9,
            }
        elif style == "cached_tokens":  # OpenAI and other hosted APIs
            turn["usage"]["prompt_tokens_details"] = {"cached_tokens": cached}
    return turns


def request_records(transcript: str | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    assert transcript is not None
    records = read_transcript(Path(transcript))
    return records, [record for record in records if record["type"] == "request"]


@pytest.mark.parametrize(
    ("style", "stream"),
    [("timings", True), ("timings", False), ("cached_tokens", True)],
    ids=["llama-server streamed", "llama-server not streamed", "hosted cached_tokens"],
)
async def test_the_result_and_the_transcript_say_what_the_server_read_and_had_cached(
    run_fix, style: str, stream: bool
) -> None:
    outcome = await run_fix("easy_compare", reporting(style, stream), stream=stream)
    assert outcome.result.status == "fixed", outcome.notices
    usage = outcome.result.to_json()["usage"]
    assert len(outcome.server.requests) == usage["requests"] == len(SENT)
    assert (usage["promptTokens"], usage["promptProcessed"], usage["promptCached"]) == (
        sum(SENT),
        sum(READ),
        sum(CACHED),
    )
    records, requests = request_records(outcome.result.transcript)
    figures = [(r["prompt_tokens"], r["prompt_processed"], r["prompt_cached"]) for r in requests]
    assert figures == list(zip(SENT, READ, CACHED, strict=True))
    assert all(r["completion_tokens"] > 0 and r["seconds"] >= 0 and r["replies"] == 1 for r in requests)
    assert [r["number"] for r in requests] == [1, 2, 3, 4]
    assert records[-1]["type"] == "result" and records[-1]["usage"] == usage  # the run's totals at the end


async def test_each_request_record_sizes_its_prompt_by_where_it_comes_from(run_fix) -> None:
    outcome = await run_fix("easy_compare", reporting("timings"))
    _, requests = request_records(outcome.result.transcript)
    first, second, last = requests[0]["by_origin"], requests[1]["by_origin"], requests[-1]["by_origin"]
    assert first["system"] > 0 and first["warm_start"] > 0 and first["task"] > 0 and first["tools"] > 0
    assert first["history"] == first["file_text"] == first["observation"] == 0
    assert (
        second["history"] > 0 and second["file_text"] > 0
    )  # the model's read_file call and the file it read
    assert last["observation"] > 0  # the edit's and the test run's results
    assert first["system"] == last["system"] and first["warm_start"] == last["warm_start"]
    roles = {tuple(part[:2]) for part in requests[1]["messages"]}
    assert {
        ("system", "system"),
        ("user", "warm_start"),
        ("assistant", "history"),
        ("tool", "file_text"),
    } <= roles


async def test_a_server_that_reports_no_cache_leaves_processed_and_cached_unknown(run_fix) -> None:
    outcome = await run_fix("easy_compare", reporting("none"))
    usage = outcome.result.to_json()["usage"]
    assert usage["promptTokens"] == sum(SENT) and usage["requests"] == len(SENT)
    assert usage["promptProcessed"] is None and usage["promptCached"] is None  # unknown, not "all of it"
    _, requests = request_records(outcome.result.transcript)
    assert all(r["prompt_processed"] is None and r["prompt_cached"] is None for r in requests)


async def test_the_breakdown_script_prints_each_request_and_the_runs_totals(run_fix) -> None:
    outcome = await run_fix("easy_compare", reporting("timings"))
    records, _ = request_records(outcome.result.transcript)
    text = runpy.run_path(str(SCRIPT))["breakdown"](records)
    header, _, *rows = text.splitlines()
    for column in (
        "system",
        "warm start",
        "file text",
        "observations",
        "history",
        "sent",
        "processed",
        "cached",
    ):
        assert column in header
    assert [row.split()[0] for row in rows[:5]] == ["1", "2", "3", "4", "all"]
    assert f"{sum(SENT):,}" in rows[4] and f"{sum(READ):,}" in rows[4] and f"{sum(CACHED):,}" in rows[4]
    assert f"{sum(SENT):,} prompt tokens sent, {sum(READ):,} processed, {sum(CACHED):,} cached" in text
