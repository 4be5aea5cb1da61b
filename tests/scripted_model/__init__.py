"""A scripted OpenAI-compatible chat server for tests: each request gets the next turn of a script.

Test support, not part of fixloop: `ScriptedModelServer` runs in-process; `python -m scripted_model
--script FILE` (from tests/, or with tests/ on PYTHONPATH) serves a script in its own process and prints the
base URL (`http://127.0.0.1:PORT/v1`) on its first stdout line. `script` says what a script may hold,
`server` plays it, `handler` answers each request (faults, delays, streams) and `replies` shapes the JSON,
`flavours` answers as OpenAI, Azure, Ollama, LM Studio, vLLM or llama.cpp's server does.
"""

from .flavours import FLAVOURS, Flavour
from .script import DEFAULT_MODEL, EXHAUSTED_SUMMARY, FAULTS, ScriptError, load_script, normalize_script
from .server import ScriptedModelServer

__all__ = [
    "DEFAULT_MODEL",
    "EXHAUSTED_SUMMARY",
    "FAULTS",
    "FLAVOURS",
    "Flavour",
    "ScriptError",
    "ScriptedModelServer",
    "load_script",
    "normalize_script",
]
