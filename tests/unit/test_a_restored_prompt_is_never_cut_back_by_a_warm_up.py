"""A managed llama-server that restored the last process's whole prompt is sent no warm-up: a warm-up keeps
only the prefix it shares with the slot and cuts the rest. Found in the demo's server log: the language
server's own warm-up was skipped, the fix run's then cut the restored 868 tokens back to 184, and the
demo's first request read 607 tokens again (14 s of its 32)."""

from __future__ import annotations

from fixloop.model.warm_up import forget_restored, mark_restored, start_warm_up

PREFIX = [{"role": "system", "content": "You fix failing tests."}]


async def test_no_warm_up_of_any_prefix_reaches_a_server_that_restored_a_prompt() -> None:
    url = "http://127.0.0.1:9/v1"  # nothing listens: a warm-up sent would be a task, not None
    mark_restored(url)
    assert start_warm_up(url, "local", None, PREFIX, None) is None  # the language server's, at its start
    assert start_warm_up(url, "local", None, PREFIX, [{"type": "function"}]) is None  # the fix run's


async def test_a_server_that_restored_nothing_is_warmed_once() -> None:
    url = "http://127.0.0.1:10/v1"
    task = start_warm_up(url, "local", None, PREFIX, None, timeout=1.0)
    assert task is not None
    assert start_warm_up(url, "local", None, PREFIX, None) is None
    await task  # a failed warm-up is not the run's failure


async def test_a_stopped_server_s_address_is_warmed_again() -> None:
    url = "http://127.0.0.1:11/v1"
    mark_restored(url)
    forget_restored(url)  # the server stopped (LocalModelServer.stop): a next one here restored nothing
    task = start_warm_up(url, "local", None, PREFIX, None, timeout=1.0)
    assert task is not None
    await task


def test_the_managed_model_module_loads_without_the_openai_client() -> None:
    """The demo checks its model through fixloop.model.local before the language server starts; openai
    (a second to import on 2 cores) loads only where a request is made."""
    import subprocess
    import sys

    probe = "import sys, fixloop.model.local; print('openai' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
