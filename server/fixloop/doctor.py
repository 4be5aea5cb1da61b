"""`fixloop doctor`: what a fix needs, checked here; one line per check with ✓, or ✗ and the fix."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fixloop.config import Settings, SettingsSources
from fixloop.errors import ConfigError, ModelError
from fixloop.interpreter import TestInterpreter, choose_interpreter
from fixloop.model.endpoint import (
    KEY_REJECTED,
    MODEL_MISSING,
    UNREACHABLE,
    Endpoint,
    answers,
    is_listed,
    list_models,
)
from fixloop.model.warm_up import is_local_endpoint
from fixloop.platform_support import CURRENT, Platform

EXIT_READY, EXIT_NOT_READY = 0, 1
_MARKS = {True: "✓", False: "✗", None: "–"}


@dataclass(frozen=True)
class Check:
    """One thing a fix needs: ok (True), missing (False, with the fix) or not used here (None)."""

    name: str
    ok: bool | None
    detail: str
    fix: str = ""

    def line(self) -> str:
        return f"{_MARKS[self.ok]} {self.name}: {self.detail}" + (f" — fix: {self.fix}" if self.fix else "")


def run_doctor(root: Path, overrides: Mapping[str, Any]) -> int:
    """Print every check; exit 1 when any failed."""
    checks = asyncio.run(gather_checks(root.resolve(), overrides))
    for check in checks:
        print(check.line(), flush=True)
    return EXIT_NOT_READY if any(check.ok is False for check in checks) else EXIT_READY


async def gather_checks(root: Path, overrides: Mapping[str, Any]) -> list[Check]:
    """The checks in order: settings (if bad), interpreter, pytest, git, endpoint, model, key, local model."""
    settings, errors = SettingsSources(root, overrides=overrides).resolve()
    checks = [Check("settings", False, error, "correct the value where the message says") for error in errors]
    interpreter = _interpreter(root, settings)
    checks.append(interpreter if isinstance(interpreter, Check) else _python(interpreter, root))
    if not isinstance(interpreter, Check):
        checks.append(await asyncio.to_thread(_pytest, interpreter, root))
    checks.append(await asyncio.to_thread(_git))
    checks.append(_protections(CURRENT))
    if settings.model == "local" or settings.model.startswith("local:"):
        return checks + await asyncio.to_thread(_local, settings)
    return checks + await _remote(settings)


def _protections(platform: Platform) -> Check:
    """The one notice of what this system cannot guard (README, "Systems"); nothing to fix."""
    notice = platform.protections_notice()
    if notice is None:
        return Check("protections", True, "write sandbox (Landlock, where the kernel has it), process reaper")
    return Check("protections", None, notice)


def _interpreter(root: Path, settings: Settings) -> TestInterpreter | Check:
    """The interpreter the project's tests run with, found as a fix run finds it (interpreter.py)."""
    try:
        return choose_interpreter(root, root, test_command=settings.test_command, python=settings.python)
    except ConfigError as error:
        return Check("python", False, error.message, "set `python` (or --python) to the project's Python")


def _run(command: list[str], cwd: Path | None = None) -> tuple[int, str]:
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=60, cwd=cwd, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return -1, str(error)
    lines = (done.stdout + done.stderr).strip().splitlines()
    return done.returncode, lines[0] if done.returncode == 0 and lines else (lines[-1] if lines else "")


def _python(interpreter: TestInterpreter, root: Path) -> Check:
    if interpreter.python is None:  # a custom testCommand: its pytest check says whether it runs
        return Check("python", True, interpreter.describe(root))
    code, out = _run([str(interpreter.python), "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"])
    if code != 0:
        return Check(
            "python",
            False,
            f"cannot run {interpreter.python} ({out})",
            "set `python` (or --python) to the project's interpreter",
        )
    return Check("python", True, f"Python {out}; {interpreter.describe(root)}")


def _pytest(interpreter: TestInterpreter, root: Path) -> Check:
    code, out = _run([*interpreter.command, "--version"], cwd=root)
    if code != 0:
        return Check(
            "pytest",
            False,
            f"`{' '.join(interpreter.command)} --version` failed ({out[:120]})",
            interpreter.install_pytest,
        )
    return Check("pytest", True, out)


def _git() -> Check:
    code, out = _run(["git", "--version"])
    if code != 0:
        return Check("git", False, "not found on PATH", "install git (apt install git, brew install git, …)")
    return Check("git", True, out)


def _local(settings: Settings) -> list[Check]:
    from fixloop.model.catalog import get_model
    from fixloop.model.local import llama_problem, serving_line
    from fixloop.model.pull import model_path, status

    problem = llama_problem()
    engine = (
        Check("endpoint", False, problem) if problem else Check("endpoint", True, "the managed local model")
    )
    try:
        info = get_model(settings.model.partition(":")[2] or None)
    except ConfigError as error:
        return [
            engine,
            Check("model", False, error.message, "`fixloop model list` shows the names"),
            Check("key", True, "none needed for the local model"),
            Check("local model", None, "unknown"),
        ]
    if not problem:  # which server runs, with its slots and context
        engine = Check(
            "endpoint", True, f"the managed local model, started when needed: {serving_line(settings)}"
        )
    state = status(info)
    if state in ("verified", "unverified"):
        pulled = Check("local model", True, f"{info.name} downloaded ({model_path(info)})")
    else:
        pulled = Check("local model", False, f"{info.name} is {state}", f"fixloop model pull {info.name}")
    return [
        engine,
        Check("model", True, f"{info.name} (local)"),
        Check("key", True, "none needed for the local model"),
        pulled,
    ]


async def _remote(settings: Settings) -> list[Check]:
    endpoint = Endpoint(settings.effective_base_url(), settings.api_key(), settings.api_version)
    url = endpoint.base_url
    names: list[str] | None = None
    key_rejected: str | None = None
    try:
        names = await list_models(endpoint)
        reach = Check("endpoint", True, f"{url} answers ({len(names)} models listed)")
    except ModelError as error:
        if error.reason == UNREACHABLE:
            reach = Check(
                "endpoint",
                False,
                error.message.split(" — ")[0],
                "start the model server, or set baseUrl (FIXLOOP_BASE_URL) to where it is",
            )
        elif error.reason == KEY_REJECTED:
            key_rejected = error.message
            reach = Check("endpoint", True, f"{url} answers (and asks for a key)")
        else:
            reach = Check("endpoint", True, f"{url} answers (it lists no models)")
    unused = Check(
        "local model",
        None,
        f"not used (model '{settings.model or '(none)'}' at {url}); "
        "`fixloop model pull` fetches one for `--model local`",
    )
    return [
        reach,
        await _model(settings, endpoint, names, reached=reach.ok is True and not key_rejected),
        _key(settings, endpoint, key_rejected, answered=reach.ok is True),
        unused,
    ]


async def _model(settings: Settings, endpoint: Endpoint, names: list[str] | None, *, reached: bool) -> Check:
    model = settings.model
    if not model:
        return Check(
            "model",
            False,
            "no model configured",
            "set FIXLOOP_MODEL (or --model, or the `model` setting); `fixloop models` lists the "
            "endpoint's, and `--model local` needs no endpoint",
        )
    if not reached:
        return Check("model", None, f"'{model}' not checked (the endpoint did not answer)")
    if names and is_listed(model, names) and not endpoint.api_version:
        return Check("model", True, f"'{model}' is listed at {endpoint.base_url}")
    try:
        answered = await answers(endpoint, model, names)
    except ModelError as error:
        return Check(
            "model", False, error.message if error.reason == MODEL_MISSING else f"'{model}': {error.message}"
        )
    if answered:
        return Check("model", True, f"'{model}' answers at {endpoint.base_url}")
    return Check(
        "model",
        False,
        f"'{model}' is not listed at {endpoint.base_url} and a 1-token call to it failed",
        f"`fixloop models --base-url {endpoint.base_url}` lists what it serves",
    )


def _key(settings: Settings, endpoint: Endpoint, rejected: str | None, *, answered: bool) -> Check:
    variable = settings.api_key_variable()
    if rejected:
        detail = f"{variable} is set, but " if variable else "none set, and "
        return Check(
            "key",
            False,
            detail + rejected.split(": ", 1)[-1].split(";")[0],
            f"set {variable or 'FIXLOOP_API_KEY'} to a key this endpoint accepts",
        )
    if variable:
        return Check("key", True, f"from ${variable}")
    if is_local_endpoint(endpoint.base_url):
        return Check("key", True, "none set; none needed for a server on this machine")
    if answered:
        return Check("key", True, "none set, and the endpoint did not ask for one")
    wanted = settings.api_key_env or "FIXLOOP_API_KEY"
    return Check("key", False, "none set", f"export {wanted}=… (or name another variable with apiKeyEnv)")
