"""Model faults: retried when transient (500, 429 Retry-After, dropped stream), one-line errors otherwise."""

from __future__ import annotations

import socket
import time

import pytest

from fixloop.errors import ModelError
from support import fix_script


async def test_500_is_retried(run_fix):
    outcome = await run_fix("demo", [{"fault": "500"}, *fix_script("demo")])
    assert outcome.result.status == "fixed"


async def test_429_waits_for_retry_after(run_fix):
    started = time.monotonic()
    outcome = await run_fix("demo", [{"fault": "429", "retry_after": 1}, *fix_script("demo")])
    assert outcome.result.status == "fixed"
    assert time.monotonic() - started >= 1.0


async def test_a_stream_dropped_midway_is_retried(run_fix):
    outcome = await run_fix("demo", [{"fault": "drop"}, *fix_script("demo")])
    assert outcome.result.status == "fixed"


async def test_a_stalled_model_times_out_with_a_clear_error(run_fix):
    with pytest.raises(ModelError, match="did not answer within"):
        await run_fix("demo", [{"fault": "stall", "seconds": 30}] * 6, modelTimeout=1)


async def test_401_names_the_key_variable(run_fix):
    with pytest.raises(ModelError, match="FIXLOOP_API_KEY"):
        await run_fix("demo", [{"fault": "401"}])


async def test_unknown_model_is_named(run_fix):
    with pytest.raises(ModelError, match="model 'scripted' not found"):
        await run_fix("demo", [{"fault": "404_model"}])


async def test_unreachable_model_says_connection_refused(fixture_project):
    from fixloop.config import load_settings
    from fixloop.engine import FixRequest, FixRun
    from support import load_fix

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    root = fixture_project("demo")
    settings = load_settings(root, {"baseUrl": f"http://127.0.0.1:{port}/v1", "model": "m"}, env={})
    run = FixRun(FixRequest(root, tuple(load_fix("demo")["test_ids"])), settings)
    run_model = run.execute()
    with pytest.raises(ModelError) as caught:
        await run_model
    message = caught.value.message
    assert f"cannot reach http://127.0.0.1:{port}/v1: connection refused" in message
    assert "\n" not in message
