"""Test support shipped with fixloop: a scripted OpenAI-compatible model server."""

from typing import Any

__all__ = ["ScriptedModelServer", "normalize_script"]


def __getattr__(name: str) -> Any:
    # imported lazily so `python -m fixloop.testing.scripted_model` runs the module only once
    if name in __all__:
        from fixloop.testing import scripted_model

        return getattr(scripted_model, name)
    raise AttributeError(f"module 'fixloop.testing' has no attribute {name!r}")
