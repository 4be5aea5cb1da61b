"""Settings: defaults < [tool.fixloop] < env < initializationOptions < workspace/configuration < CLI.

`Settings` is the one typed, defaulted model: each field says its kind (how a raw value converts) and its
environment variables, and every source is read through it. Keys are the fields' names in camelCase
(snake_case is accepted too, as pyproject.toml writes them). Adding a setting is one line: a field.
Each bad value is named in one clear error; `Settings.merge` returns the errors beside settings that keep
the last good value, so a language server can report them once and carry on with defaults.
"""

from __future__ import annotations

import os
import shlex
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import Field, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from fixloop.errors import ConfigError

PROTOCOLS = ("auto", "tools", "text")
STRATEGIES = ("react", "sample")
EDIT_FORMS = ("code", "tools")
LOCALIZE = ("auto", "off")
FEEDBACK = ("full", "reasons")
OPENAI_API = "https://api.openai.com/v1"
# Keys the editors send for themselves (the VS Code extension's own settings); accepted without an
# "unknown setting" warning.
CLIENT_KEYS = frozenset({"trace", "serverPython", "server_python", "importStrategy"})

Convert = Callable[[Any], Any]  # a raw value -> the setting's value; ConfigError("must be ...") if bad


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"must be a string, got {value!r}")
    return value.strip()


def _url(value: Any) -> str:
    text = _text(value)
    if text and not text.startswith(("http://", "https://")):
        raise ConfigError(f"must be an http(s) URL, got {value!r}")
    return text


def _one_of(*choices: str) -> Convert:
    def convert(value: Any) -> str:
        if value not in choices:
            raise ConfigError(f"must be one of {', '.join(choices)}, got {value!r}")
        return value

    return convert


def _whole(low: int) -> Convert:
    def convert(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise ConfigError(f"must be a whole number, got {value!r}")
        try:
            number = int(value)
        except ValueError:
            raise ConfigError(f"must be a whole number, got {value!r}") from None
        if number < low:
            raise ConfigError(f"must be at least {low}, got {number}")
        return number

    return convert


def _number(*, zero: bool) -> Convert:
    def convert(value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise ConfigError(f"must be a number, got {value!r}")
        try:
            number = float(value)
        except ValueError:
            raise ConfigError(f"must be a number, got {value!r}") from None
        if number < 0 or (number == 0 and not zero):
            raise ConfigError(f"must be positive, got {value!r}")
        return number

    return convert


def _flag(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("1", "true", "yes", "on", "0", "false", "no", "off"):
        return value.lower() in ("1", "true", "yes", "on")
    raise ConfigError(f"must be true or false, got {value!r}")


def _command(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = shlex.split(value)
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"must be a list of strings (empty: the project's interpreter), got {value!r}")
    return tuple(value)


def setting(
    default: Any, convert: Convert, *, env: tuple[str, ...] = (), aliases: tuple[str, ...] = ()
) -> Any:
    """A settings field: its default, how a raw value converts, its environment variables (later ones win
    over earlier ones) and other keys it is known by."""
    return field(default=default, metadata={"convert": convert, "env": env, "aliases": aliases})


@dataclass(frozen=True)
class Settings:
    """One fix run's configuration (the public settings table in docs/settings.md, plus engine budgets)."""

    model: str = setting("", _text, env=("FIXLOOP_MODEL",))
    base_url: str = setting("", _url, env=("OPENAI_BASE_URL", "FIXLOOP_BASE_URL"), aliases=("apiBase",))
    api_key_env: str = setting("", _text)
    api_version: str = setting("", _text, env=("OPENAI_API_VERSION", "FIXLOOP_API_VERSION"))  # Azure OpenAI
    protocol: str = setting("auto", _one_of(*PROTOCOLS), env=("FIXLOOP_PROTOCOL",))
    max_steps: int = setting(30, _whole(1), env=("FIXLOOP_MAX_STEPS",))
    attempts: int = setting(3, _whole(1), env=("FIXLOOP_ATTEMPTS",))
    test_command: tuple[str, ...] = setting((), _command)  # empty: `<the project's python> -m pytest`
    python: str = setting("", _text, env=("FIXLOOP_PYTHON",))  # the project's interpreter; empty: found
    test_timeout: float = setting(60.0, _number(zero=False), env=("FIXLOOP_TEST_TIMEOUT",))
    allow_test_edits: bool = setting(False, _flag, env=("FIXLOOP_ALLOW_TEST_EDITS",))
    run_tests_on_save: bool = setting(False, _flag)
    # Engine budgets, settable but not part of the editor-facing table.
    max_tokens: int = setting(400_000, _whole(1))
    max_seconds: float = setting(1800.0, _number(zero=False), env=("FIXLOOP_MAX_SECONDS",))
    output_cap: int = setting(16 * 1024, _whole(1))
    model_timeout: float = setting(600.0, _number(zero=False))
    # None: not sent (some hosted reasoning models reject it)
    temperature: float | None = setting(None, _number(zero=True), env=("FIXLOOP_TEMPERATURE",))
    stream: bool = setting(True, _flag)
    compact_tools: bool = setting(False, _flag)  # one-line tool schemas (always on for the local model)
    local_threads: int = setting(0, _whole(0))
    local_context: int = setting(0, _whole(0))  # the managed model's KV cache in tokens; 0: the run's need
    context_chars: int = setting(48_000, _whole(2000))  # the conversation's budget (older output shrinks)
    warm_start_chars: int = setting(6000, _whole(0))  # what the first prompt may gather
    # The search around the model (docs/search.md); a model's profile fills what is not set.
    strategy: str = setting("react", _one_of(*STRATEGIES), env=("FIXLOOP_STRATEGY",))
    edit_form: str = setting("tools", _one_of(*EDIT_FORMS), env=("FIXLOOP_EDIT_FORM",))
    samples: int = setting(6, _whole(0), env=("FIXLOOP_SAMPLES",))  # N candidates a round; 0: no sampling
    sample_parallel: int = setting(2, _whole(1))  # M candidates validated at a time
    sample_temperature: float = setting(0.8, _number(zero=False))
    # sampling rounds after a rejected or repeated attempt (0: none; known model families get some)
    sample_rounds: int = setting(0, _whole(0), env=("FIXLOOP_SAMPLE_ROUNDS",))
    sample_focus: bool = setting(True, _flag, env=("FIXLOOP_SAMPLE_FOCUS",))  # a function each, as a hint
    sample_seconds: float = setting(900.0, _number(zero=False))  # one round's time budget
    sample_tokens: int = setting(60_000, _whole(1))  # one round's token budget
    localize: str = setting("auto", _one_of(*LOCALIZE), env=("FIXLOOP_LOCALIZE",))
    # full: a rejection shows expected vs actual, the diff and the fixes tried; reasons: the gate's reasons
    feedback: str = setting("full", _one_of(*FEEDBACK), env=("FIXLOOP_FEEDBACK",))
    # Each ingredient of the search can be turned off, for ablations (all on by default):
    # a failure shows its arguments and expected vs actual (warm start, run_tests, rejections, rounds)
    failing_inputs: bool = setting(True, _flag, env=("FIXLOOP_FAILING_INPUTS",))
    # near-ties in the coverage ranking go to what the failing test calls
    call_distance_localization: bool = setting(True, _flag, env=("FIXLOOP_CALL_DISTANCE",))
    # answers replace nested defs, methods, constants (two of one name: the suspect's)
    code_answer_placement: bool = setting(True, _flag, env=("FIXLOOP_CODE_ANSWER_PLACEMENT",))
    # a copy back asked again with the failing call (off: dropped, the round draws on; docs/search.md)
    reask_unchanged: bool = setting(False, _flag, env=("FIXLOOP_REASK_UNCHANGED",))
    draw_variety: bool = setting(True, _flag, env=("FIXLOOP_DRAW_VARIETY",))  # a draw its own hints
    # silence, repeats and stuck calls move the run to the next kind of round (suspect, lines, loop)
    round_kinds: bool = setting(True, _flag, env=("FIXLOOP_ROUND_KINDS",))
    # one-token changes of the suspect lines (operators, constants, bounds), tried before the model is asked
    mutants: bool = setting(True, _flag, env=("FIXLOOP_MUTANTS",))
    # after the first verified fix the search goes on until this many distinct verified fixes ...
    pool_size: int = setting(3, _whole(1), env=("FIXLOOP_POOL_SIZE",))
    # ... or this share of the time then left (0: the first verified fix ends the search), then ranks them
    pool_share: float = setting(0.25, _number(zero=True), env=("FIXLOOP_POOL_SHARE",))
    # The keys some source set (not compared): a model profile fills only the others.
    explicit: frozenset[str] = field(default=frozenset(), compare=False, repr=False)

    def api_key(self, env: Mapping[str, str] | None = None) -> str | None:
        """The key from the configured env var, else FIXLOOP_API_KEY, else OPENAI_API_KEY."""
        env = os.environ if env is None else env
        variable = self.api_key_variable(env)
        return env[variable] if variable else None

    def api_key_variable(self, env: Mapping[str, str] | None = None) -> str | None:
        """The name of the environment variable the key comes from (None: no key is set)."""
        env = os.environ if env is None else env
        names = [self.api_key_env] if self.api_key_env else ["FIXLOOP_API_KEY", "OPENAI_API_KEY"]
        return next((name for name in names if env.get(name)), None)

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
            spec = _FIELD_BY_KEY.get(str(raw_key))
            if spec is None:
                if str(raw_key) not in CLIENT_KEYS:
                    errors.append(f"{source}: unknown setting {raw_key!r}")
                continue
            if raw_value is None:
                continue
            try:
                changes[spec.name] = spec.metadata["convert"](raw_value)
            except ConfigError as error:
                errors.append(f"{source}: {camel_case(spec.name)} {error.message}")
        return replace(self, **changes, explicit=self.explicit | changes.keys()), errors

    def given(self, **values: Any) -> Settings:
        """These settings with `values` set as if a source had given them (a profile will not change them)."""
        return replace(self, **values, explicit=self.explicit | values.keys())


def camel_case(name: str) -> str:
    """A field's key in the editors' settings: max_steps -> maxSteps."""
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _setting_fields() -> list[Field[Any]]:
    return [spec for spec in fields(Settings) if "convert" in spec.metadata]


def setting_names() -> tuple[str, ...]:
    """Every setting's snake_case name (the fields of `Settings`)."""
    return tuple(spec.name for spec in _setting_fields())


def setting_env(name: str) -> tuple[str, ...]:
    """The environment variables a setting reads, the one that wins first (FIXLOOP_BASE_URL, OPENAI_…)."""
    return tuple(reversed(next(spec for spec in fields(Settings) if spec.name == name).metadata["env"]))


_FIELD_BY_KEY: dict[str, Field[Any]] = {
    key: spec
    for spec in _setting_fields()
    for key in (spec.name, camel_case(spec.name), *spec.metadata["aliases"])
}


def env_values(env: Mapping[str, str]) -> dict[str, Any]:
    """The settings the environment gives (FIXLOOP_MODEL, ...), keyed by field name."""
    values: dict[str, Any] = {}
    for spec in _setting_fields():
        for variable in spec.metadata["env"]:
            if env.get(variable):
                values[spec.name] = env[variable]
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
    project: Path | None = None  # the test's project when it is a folder below `root` (a monorepo package)

    def resolve(self) -> tuple[Settings, list[str]]:
        settings = Settings()
        errors: list[str] = []
        folders = [self.root]
        if self.project is not None and self.project != self.root:
            folders.append(self.project)
        layers: list[tuple[Mapping[str, Any] | None, str]] = []
        for folder in folders:
            values, folder_errors = pyproject_values(folder)
            errors += folder_errors
            layers.append((values, "[tool.fixloop] in pyproject.toml"))
        layers += [
            (env_values(self.env), "environment"),
            (self.init_options, "initializationOptions"),
            (self.client_config, "workspace/configuration"),
            (self.overrides, "command line"),
        ]
        for values, source in layers:
            settings, layer_errors = settings.merge(values, source)
            errors += layer_errors
        return settings, errors


def load_settings(
    root: Path,
    overrides: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    project: Path | None = None,
) -> Settings:
    """Settings for a CLI run; any bad value is a ConfigError naming it."""
    settings, errors = SettingsSources(
        root, dict(os.environ if env is None else env), overrides=overrides, project=project
    ).resolve()
    if errors:
        raise ConfigError(errors[0] + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""))
    return settings
