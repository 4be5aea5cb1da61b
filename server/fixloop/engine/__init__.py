"""The engine: one fix run (fix_run.py), what it is asked (request.py), what the settings decide for it and
the loop's wiring (assembly.py), its model (model_session.py).

Every face (language server, CLI, benchmark, demo) runs fixes through `FixRun`; the engine knows nothing
of LSP. Its names load on first use (PEP 562), so that a face which only gets the model ready (the language
server as it starts) does not load the chat client and the agent with it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fixloop.engine.assembly import RunPlan, is_local, plan_run
    from fixloop.engine.fix_run import FixRun
    from fixloop.engine.model_session import model_endpoint, open_chat_model, prepare_model
    from fixloop.engine.request import FixRequest, PreviousRun

_HOMES = {
    "FixRequest": "request",
    "FixRun": "fix_run",
    "PreviousRun": "request",
    "RunPlan": "assembly",
    "is_local": "assembly",
    "model_endpoint": "model_session",
    "open_chat_model": "model_session",
    "plan_run": "assembly",
    "prepare_model": "model_session",
}

__all__ = [
    "FixRequest",
    "FixRun",
    "PreviousRun",
    "RunPlan",
    "is_local",
    "model_endpoint",
    "open_chat_model",
    "plan_run",
    "prepare_model",
]


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
    globals()[name] = value
    return value
