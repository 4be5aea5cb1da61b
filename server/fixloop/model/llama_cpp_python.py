"""llama-cpp-python's server, the managed model's fallback where llama.cpp's own server is not built: the
interpreter that runs it and whether it has the modules it needs; `llama_problem` says why neither server
can start."""

from __future__ import annotations

import os
import subprocess
import sys

from fixloop.model.llama_server import llama_server_path, llama_server_problem

LLAMA_PYTHON_ENV = "FIXLOOP_LLAMA_PYTHON"
LLAMA_REQUIREMENT = "llama-cpp-python[server]==0.3.36"  # the `local` extra in pyproject.toml
# Modules `python -m llama_cpp.server` needs: llama-cpp-python plus its [server] extra.
_SERVER_MODULES = (
    "llama_cpp",
    "uvicorn",
    "fastapi",
    "sse_starlette",
    "starlette_context",
    "pydantic_settings",
)


def llama_python() -> str:
    """The interpreter that runs llama.cpp's server: $FIXLOOP_LLAMA_PYTHON, else this one."""
    return os.environ.get(LLAMA_PYTHON_ENV) or sys.executable


_HAS_SERVER: set[str] = set()  # interpreters already found complete (only success is remembered)


def _missing_modules(python: str) -> list[str] | None:
    """The server modules `python` lacks (found without importing them); None if it cannot run."""
    if python in _HAS_SERVER:
        return []
    probe = (
        "import importlib.util, sys\n"
        "print(' '.join(m for m in sys.argv[1:] if importlib.util.find_spec(m) is None))"
    )
    try:
        done = subprocess.run(
            [python, "-c", probe, *_SERVER_MODULES],
            capture_output=True,
            text=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    missing = done.stdout.split()
    if not missing:
        _HAS_SERVER.add(python)
    return missing


def llama_problem() -> str | None:
    """Why no llama.cpp server can start here (one line with the fix), or None when one can: the built
    llama-server, else llama-cpp-python's."""
    problem = llama_server_problem()
    if problem or llama_server_path() is not None:
        return problem
    python = llama_python()
    missing = _missing_modules(python)
    if missing is None:
        return (
            f"cannot run {python} (from ${LLAMA_PYTHON_ENV}): point it at a Python with "
            "llama-cpp-python[server], or unset it"
        )
    if missing:
        return f"llama-cpp-python is missing from {python}: {install_llama_hint(python)}"
    return None


def install_llama_hint(python: str) -> str:
    """The command that adds the local model's server to an interpreter (the `local` extra)."""
    return (
        f"install it with `{python} -m pip install '{LLAMA_REQUIREMENT}'` (or run "
        "scripts/install-local.sh in a fixloop checkout, which builds llama.cpp with portable CPU flags)"
    )
