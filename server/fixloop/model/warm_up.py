"""Warming a local server's prompt cache: the fixed prefix (system prompt, tools) sent once, `max_tokens: 1`.

A local server (llama.cpp) keeps the KV cache of the prompt it last read, so once the prefix has been
read the first real turn pays only for the task. One warm-up runs per endpoint and prefix at a time; a
turn waits for a warm-up still running (`settle`) rather than racing it for the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import ipaddress
import json
import logging
from typing import Any
from urllib.parse import urlsplit

log = logging.getLogger(__name__)

_warmed: set[tuple[str, str, str]] = set()  # (base_url, model, prefix digest) read by the server
_running: dict[str, asyncio.Task[None]] = {}  # base_url -> the warm-up in flight
_restored: set[str] = set()  # base URLs whose server restored a whole earlier prompt (prompt_store.py)


def mark_restored(base_url: str) -> None:
    """The server at `base_url` holds an earlier run's whole prompt: a warm-up would cut it back to its
    prefix (a request keeps only what it shares with the slot's prompt), so none is sent to it."""
    _restored.add(base_url)


def forget_restored(base_url: str) -> None:
    """The server at `base_url` stopped: whatever answers there next is warmed again."""
    _restored.discard(base_url)


def is_local_endpoint(base_url: str) -> bool:
    """Whether the endpoint runs on this machine (loopback), where warming the cache pays off."""
    host = (urlsplit(base_url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def start_warm_up(
    base_url: str,
    model: str,
    api_key: str | None,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    timeout: float = 600.0,
) -> asyncio.Task[None] | None:
    """Send the prefix in the background once (a task; None when it was read already or is being read)."""
    digest = hashlib.sha256(json.dumps([messages, tools], sort_keys=True).encode()).hexdigest()
    key = (base_url, model, digest)
    running = _running.get(base_url)
    if base_url in _restored:  # every prefix warm-up of it would cut the restored prompt (the language
        return None  # server's at its start, then its first fix's): none is sent
    if key in _warmed or (
        running is not None and not running.done() and running.get_loop() is asyncio.get_running_loop()
    ):
        return None
    _warmed.add(key)
    task = asyncio.ensure_future(_warm(key, api_key, messages, tools, timeout))
    _running[base_url] = task
    return task


async def settle(base_url: str, timeout: float) -> None:  # noqa: ASYNC109 - a bound on someone else's task
    """Wait (at most `timeout` s) for a warm-up of `base_url` still in flight; its failure is not ours."""
    task = _running.get(base_url)
    if task is None or task.done() or task.get_loop() is not asyncio.get_running_loop():
        return
    with contextlib.suppress(Exception):
        async with asyncio.timeout(timeout):
            await asyncio.shield(task)


async def _warm(
    key: tuple[str, str, str],
    api_key: str | None,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    timeout: float,  # noqa: ASYNC109
) -> None:
    from fixloop.model.client import ChatModel  # here: the openai client takes a second to import

    base_url, model_name, _ = key
    model = ChatModel(
        base_url=base_url,
        model=model_name,
        api_key=api_key,
        timeout=timeout,
        max_retries=0,
        stream=False,
        max_output_tokens=1,
    )
    try:
        await model.complete(messages, tools=tools)
    except asyncio.CancelledError:
        _warmed.discard(key)
        raise
    except Exception as error:  # a warm-up that fails costs nothing but the warm-up
        _warmed.discard(key)
        log.info("warming the prompt cache at %s failed: %s", base_url, error)
    finally:
        await asyncio.shield(model.close())
