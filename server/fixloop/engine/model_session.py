"""The run's model: which endpoint and name the settings mean, its preflight, and its prompt cache warmed
with the fixed prefix (also ahead of the first fix, when the language server starts)."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from fixloop.agent.call_protocols import fixed_prefix
from fixloop.config import Settings
from fixloop.engine.assembly import RunPlan, first_request_tools, is_local, plan_run
from fixloop.errors import FixloopError
from fixloop.model.endpoint import Endpoint, preflight
from fixloop.model.profiles import with_profile
from fixloop.model.warm_up import is_local_endpoint, start_warm_up
from fixloop.tools import tool_catalog

if TYPE_CHECKING:
    from fixloop.model.client import ChatModel

log = logging.getLogger(__name__)


async def model_endpoint(settings: Settings) -> tuple[str, str]:
    """(base_url, model name) for the settings; starts the managed local model for `local[:name]`."""
    settings.require_model()
    if is_local(settings):
        from fixloop.model.local import ensure_local_server

        return await ensure_local_server(settings)
    return settings.effective_base_url(), settings.model


def open_chat_model(settings: Settings, base_url: str, model_name: str) -> ChatModel:
    """The run's chat model; `temperature` is sent only when set (the managed local model: 0 by default)."""
    from fixloop.model.client import ChatModel  # the chat client loads with the first run, not at start

    temperature = settings.temperature
    if temperature is None and is_local(settings):
        temperature = 0.0
    return ChatModel(
        base_url=base_url,
        model=model_name,
        api_key=settings.api_key(),
        timeout=settings.model_timeout,
        temperature=temperature,
        stream=settings.stream,
        api_version=settings.api_version,
    )


async def check_endpoint(settings: Settings, base_url: str, model_name: str) -> None:
    """The preflight (model/endpoint.py) of a configured endpoint; the managed local model needs none."""
    if not is_local(settings):
        await preflight(Endpoint(base_url, settings.api_key(), settings.api_version), model_name)


def raise_if_failed(opening: asyncio.Future[ChatModel]) -> None:
    """Raise the endpoint check's error, if it has failed by now."""
    if opening.done() and not opening.cancelled() and (error := opening.exception()) is not None:
        raise error


def warm_up(
    settings: Settings, base_url: str, model_name: str, plan: RunPlan | None = None
) -> asyncio.Task[None] | None:
    """Send the run's fixed prefix to a managed or local endpoint once, in the background (None: not
    local, or already warm), so that the first turn reads only the task. `settings` as the run uses them
    (its model's profile applied), `plan` the run's when it has one: a run that starts with a code round
    sends no tool schemas at first."""
    if not (is_local(settings) or is_local_endpoint(base_url)):
        return None
    plan = plan or plan_run(settings)
    messages, tools = fixed_prefix(plan.protocol, tool_catalog(), plan.compact_tools)
    tools = first_request_tools(settings, tools)
    return start_warm_up(base_url, model_name, settings.api_key(), messages, tools, settings.model_timeout)


async def prepare_model(settings: Settings) -> None:
    """Ahead of the first fix (the language server's start): start a managed local model and warm a local
    endpoint's prompt cache. Problems are left for the fix to report."""
    try:
        if not settings.model or not (is_local(settings) or is_local_endpoint(settings.effective_base_url())):
            return
        task = warm_up(with_profile(settings), *await model_endpoint(settings))
        if task is not None:
            await task
    except FixloopError as error:
        log.info("the model is not ready ahead of a fix: %s", error.message)


def keep_first_prompt(settings: Settings, base_url: str, test_id: str) -> None:
    """The run's first reply is in: a managed local model keeps the prompt it read for a retry (the next
    process finds it read); any other endpoint keeps nothing."""
    if is_local(settings):
        from fixloop.model.local import keep_first_prompt as keep

        keep(base_url, test_id)
