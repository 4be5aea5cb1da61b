"""The engine: one fix run (fix_run.py), what it is asked (request.py), its model (model_session.py).

Every face (language server, CLI, benchmark, demo) runs fixes through `FixRun`; the engine knows nothing
of LSP.
"""

from fixloop.engine.fix_run import FixRun
from fixloop.engine.model_session import is_local, model_endpoint, open_chat_model, prepare_model
from fixloop.engine.request import FixRequest, PreviousRun

__all__ = [
    "FixRequest",
    "FixRun",
    "PreviousRun",
    "is_local",
    "model_endpoint",
    "open_chat_model",
    "prepare_model",
]
