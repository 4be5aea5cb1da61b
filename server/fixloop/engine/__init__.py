"""The engine: one fix run (fix_run.py), what it is asked (request.py), what the settings decide for it and
the loop's wiring (assembly.py), its model (model_session.py).

Every face (language server, CLI, benchmark, demo) runs fixes through `FixRun`; the engine knows nothing
of LSP.
"""

from fixloop.engine.assembly import RunPlan, is_local, plan_run
from fixloop.engine.fix_run import FixRun
from fixloop.engine.model_session import model_endpoint, open_chat_model, prepare_model
from fixloop.engine.request import FixRequest, PreviousRun

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
