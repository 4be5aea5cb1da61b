"""Settings: defaults < [tool.fixloop] < env < initializationOptions < workspace/configuration < CLI.

Every source uses the same keys (camelCase; snake_case accepted in pyproject.toml). Each bad value is
named in one clear error; `Settings.merge` returns the errors beside settings that keep the last good
value, so a language server can report them once and carry on with defaults.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from fixloop.errors import ConfigError

PROTOCOLS = ("auto", "tools", "text")
OPENAI_API = "https://api.openai.com/v1"


@dataclass(frozen=True)
class Settings:
    """One fix run's configuration (the public settings table in DESIGN.md, plus engine budgets)."""

    model: str = ""
    base_url: str = ""
    api_key_env: str = ""
    protocol: str = "auto"
    max_steps: int = 30
    attempts: int = 3
    test_command: tuple[str, ...] = ("python", "-m", "pytest")
    test_timeout: float = 60.0
    allow_test_edits: bool = False
    run_tests_on_save: bool = False
    # Engine budgets, settable but not part of the editor-facing table.
    max_tokens: int = 400_000
    max_seconds: float = 1800.0
    output_cap: int = 16 * 1024
    model_timeout: float = 600.0
    temperature: float = 0.0
    stream: bool = True
    compact_tools: bool = False  # one-line tool schemas (always on for the managed local model)
    local_threads: int = 0
    local_context: int = 16384

    def api_key(self, env: Mapping[str, str] | None = None) -> str | None:
        """The key from the configured env var, else FIXLOOP_API_KEY, else OPENAI_API_KEY."""
        env = os.environ if env is None else env
        names = [self.api_key_env] if self.api_key_env else ["FIXLOOP_API_KEY", "OPENAI_API_KEY"]
        for name in names:
            if env.get(name):
                return env[name]
        return None

    def effective_base_url(self) -> str:
        return self.base_url or OPENAI_API

    def require_model(self) -> None:
        if not self.model:
            raise ConfigError(
                "no model configured: set FIXLOOP_MODEL (and FIXLOOP_BASE_URL), the `model` setting, "
                "or use `model: local`"
            )

    def merge(self, values: Mapping[str, Any] | None, source: str) -> tuple[Settings, list[str]]:
        """Settings with `values` applied; bad values are skipped and described in the returned errors."""
        if not values:
            return self, []
        if not isinstance(values, Mapping):
            return self, [f"{source}: settings must be an object, got {type(values).__name__}"]
        changes: dict[str, Any] = {}
        errors: list[str] = []
        for raw_key, raw_value in values.items():
            name = _FIELD_BY_KEY.get(str(raw_key))
            if name is None:
                if str(raw_key) not in _IGNORED_KEYS:
                    errors.append(f"{source}: unknown setting {raw_key!r}")
                continue
            if raw_value is None:
                continue
            try:
                changes[name] = _convert(name, raw_value)
            except ConfigError as error:
                errors.append(f"{source}: {_camel(name)} {error.message}")
        return replace(self, **changes), errors


# Client-side settings (VS Code extension), and `python` (the project's interpreter, CONTRACT: clients
# send it per folder; the server accepts it now and uses it once it picks the tests' interpreter).
_IGNORED_KEYS = {"trace", "serverPython", "server_python", "importStrategy", "python"}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


_FIELD_BY_KEY: dict[str, str] = {}
for _f in fields(Settings):
    _FIELD_BY_KEY[_f.name] = _f.name
    _FIELD_BY_KEY[_camel(_f.name)] = _f.name
_FIELD_BY_KEY["apiBase"] = "base_url"


def _convert(name: str, value: Any) -> Any:
    if name in ("model", "base_url", "api_key_env"):
        if not isinstance(value, str):
            raise ConfigError(f"must be a string, got {value!r}")
        if name == "base_url" and value and not value.startswith(("http://", "https://")):
            raise ConfigError(f"must be an http(s) URL, got {value!r}")
        return value.strip()
    if name == "protocol":
        if value not in PROTOCOLS:
            raise ConfigError(f"must be one of {', '.join(PROTOCOLS)}, got {value!r}")
        return value
    if name in ("max_steps", "attempts", "max_tokens", "output_cap", "local_threads", "local_context"):
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise ConfigError(f"must be a whole number, got {value!r}")
        try:
            number = int(value)
        except ValueError:
            raise ConfigError(f"must be a whole number, got {value!r}") from None
        low = 0 if name == "local_threads" else 1
        if number < low:
            raise ConfigError(f"must be at least {low}, got {number}")
        return number
    if name in ("test_timeout", "max_seconds", "model_timeout", "temperature"):
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise ConfigError(f"must be a number of seconds, got {value!r}")
        try:
            number = float(value)
        except ValueError:
            raise ConfigError(f"must be a number, got {value!r}") from None
        if number < 0 or (number == 0 and name != "temperature"):
            raise ConfigError(f"must be positive, got {value!r}")
        return number
    if name in ("allow_test_edits", "run_tests_on_save", "stream", "compact_tools"):
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("1", "true", "yes", "on", "0", "false", "no", "off"):
            return value.lower() in ("1", "true", "yes", "on")
        raise ConfigError(f"must be true or false, got {value!r}")
    if name == "test_command":
        if isinstance(value, str):
            import shlex

            value = shlex.split(value)
        if not isinstance(value, list | tuple) or not value or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"must be a non-empty list of strings, got {value!r}")
        return tuple(value)
    raise ConfigError(f"is not settable, got {value!r}")  # pragma: no cover


ENV_KEYS = {
    "FIXLOOP_MODEL": "model",
    "FIXLOOP_BASE_URL": "baseUrl",
    "FIXLOOP_PROTOCOL": "protocol",
    "FIXLOOP_MAX_STEPS": "maxSteps",
    "FIXLOOP_ATTEMPTS": "attempts",
    "FIXLOOP_TEST_TIMEOUT": "testTimeout",
}


def env_values(env: Mapping[str, str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    if env.get("OPENAI_BASE_URL"):
        values["baseUrl"] = env["OPENAI_BASE_URL"]
    for var, key in ENV_KEYS.items():
        if env.get(var):
            values[key] = env[var]
    return values


def pyproject_values(root: Path) -> tuple[dict[str, Any], list[str]]:
    path = root / "pyproject.toml"
    if not path.is_file():
        return {}, []
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        return {}, [f"{path}: cannot read [tool.fixloop]: {error}"]
    section = data.get("tool", {}).get("fixloop", {})
    if not isinstance(section, dict):
        return {}, [f"{path}: [tool.fixloop] must be a table"]
    return section, []


@dataclass
class SettingsSources:
    """The layered sources for one project; `resolve()` gives the merged settings and every error."""

    root: Path
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    init_options: Mapping[str, Any] | None = None
    client_config: Mapping[str, Any] | None = None
    overrides: Mapping[str, Any] | None = None

    def resolve(self) -> tuple[Settings, list[str]]:
        settings = Settings()
        errors: list[str] = []
        project, project_errors = pyproject_values(self.root)
        errors += project_errors
        layers = [
            (project, "[tool.fixloop] in pyproject.toml"),
            (env_values(self.env), "environment"),
            (self.init_options, "initializationOptions"),
            (self.client_config, "workspace/configuration"),
            (self.overrides, "command line"),
        ]
        for values, source in layers:
            settings, layer_errors = settings.merge(values, source)
            errors += layer_errors
        return settings, errors


def load_settings(root: Path, overrides: Mapping[str, Any] | None = None,
                  env: Mapping[str, str] | None = None) -> Settings:
    """Settings for a CLI run; any bad value is a ConfigError naming it."""
    settings, errors = SettingsSources(root, dict(os.environ if env is None else env),
                                       overrides=overrides).resolve()
    if errors:
        raise ConfigError(errors[0] + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""))
    return settings
