"""Settings: layered sources, camelCase and snake_case keys, each bad value named once, defaults kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixloop.config import Settings, SettingsSources, camel_case, load_settings, setting_names
from fixloop.errors import ConfigError


def test_defaults_match_the_contract():
    s = Settings()
    assert (
        s.protocol,
        s.max_steps,
        s.attempts,
        s.test_command,
        s.test_timeout,
        s.allow_test_edits,
        s.run_tests_on_save,
        s.python,
    ) == ("auto", 30, 3, (), 60.0, False, False, "")


def test_later_sources_win(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.fixloop]\nmodel = "from-pyproject"\nmax_steps = 7\nattempts = 5\n'
    )
    settings, errors = SettingsSources(
        tmp_path,
        env={"FIXLOOP_MODEL": "from-env", "FIXLOOP_BASE_URL": "http://env/v1"},
        init_options={"model": "from-init", "protocol": "text"},
        client_config={"model": "from-config"},
    ).resolve()
    assert errors == []
    assert settings.model == "from-config"
    assert settings.max_steps == 7 and settings.attempts == 5
    assert settings.base_url == "http://env/v1"
    assert settings.protocol == "text"


def test_bad_values_are_each_named_and_defaults_kept(tmp_path: Path):
    settings, errors = SettingsSources(
        tmp_path,
        env={},
        init_options={
            "maxSteps": "many",
            "protocol": "xml",
            "testCommand": [1],
            "allowTestEdits": "perhaps",
            "baseUrl": "ftp://x",
            "unknownKey": 1,
        },
    ).resolve()
    assert settings == Settings()
    assert len(errors) == 6
    joined = "\n".join(errors)
    for name in ("maxSteps", "protocol", "testCommand", "allowTestEdits", "baseUrl", "unknownKey"):
        assert name in joined
    assert all("\n" not in e for e in errors)


def test_client_keys_from_the_editor_are_accepted_without_warnings(tmp_path: Path):
    """The VS Code extension sends its whole section, and `python` per folder (CONTRACT.md)."""
    settings, errors = SettingsSources(
        tmp_path,
        env={},
        client_config={
            "serverPython": "/usr/bin/python3",
            "importStrategy": "useBundled",
            "trace": {"server": "off"},
            "python": "/project/.venv/bin/python",
        },
    ).resolve()
    assert errors == []
    assert settings == Settings(python="/project/.venv/bin/python")


def test_an_empty_test_command_means_the_projects_interpreter(tmp_path: Path):
    settings, errors = SettingsSources(tmp_path, env={}, init_options={"testCommand": []}).resolve()
    assert errors == [] and settings.test_command == ()


def test_a_packages_own_pyproject_overrides_the_workspace_one(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text("[tool.fixloop]\nmax_steps = 7\nattempts = 5\n")
    package = tmp_path / "packages" / "app"
    package.mkdir(parents=True)
    (package / "pyproject.toml").write_text("[tool.fixloop]\nmax_steps = 9\n")
    settings = load_settings(tmp_path, env={}, project=package)
    assert (settings.max_steps, settings.attempts) == (9, 5)


def test_test_command_accepts_a_string(tmp_path: Path):
    settings = load_settings(tmp_path, {"testCommand": "python3 -m pytest -x"}, env={})
    assert settings.test_command == ("python3", "-m", "pytest", "-x")


def test_load_settings_raises_one_clear_error(tmp_path: Path):
    with pytest.raises(ConfigError, match="command line: maxSteps must be at least 1"):
        load_settings(tmp_path, {"maxSteps": 0}, env={})


def test_broken_pyproject_is_reported_not_raised(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text("[tool.fixloop\n")
    settings, errors = SettingsSources(tmp_path, env={}).resolve()
    assert settings == Settings() and len(errors) == 1 and "pyproject.toml" in errors[0]


def test_api_key_comes_from_the_named_variable():
    assert Settings(api_key_env="MY_KEY").api_key({"MY_KEY": "k1", "FIXLOOP_API_KEY": "k2"}) == "k1"
    assert Settings().api_key({"FIXLOOP_API_KEY": "k2", "OPENAI_API_KEY": "k3"}) == "k2"
    assert Settings().api_key({"OPENAI_API_KEY": "k3"}) == "k3"
    assert Settings().api_key({}) is None


def test_missing_model_is_an_actionable_error():
    with pytest.raises(ConfigError, match="FIXLOOP_MODEL"):
        Settings().require_model()


def test_every_setting_is_read_by_its_camel_case_and_snake_case_key(tmp_path: Path):
    """The settings model drives conversion: a field is a setting under both names, with no extra table."""
    for name in setting_names():
        default = getattr(Settings(), name)
        value = list(default) if isinstance(default, tuple) else default
        for key in (name, camel_case(name)):
            settings, errors = SettingsSources(tmp_path, env={}, init_options={key: value}).resolve()
            assert (settings, errors) == (Settings(), []), key


def test_environment_variables_fill_their_settings(tmp_path: Path):
    env = {
        "FIXLOOP_MODEL": "m",
        "OPENAI_BASE_URL": "http://openai/v1",
        "FIXLOOP_PROTOCOL": "text",
        "FIXLOOP_MAX_STEPS": "9",
        "FIXLOOP_ATTEMPTS": "2",
        "FIXLOOP_TEST_TIMEOUT": "5",
        "FIXLOOP_MAX_SECONDS": "300",
    }
    settings, errors = SettingsSources(tmp_path, env=env).resolve()
    assert errors == []
    assert (
        settings.model,
        settings.base_url,
        settings.protocol,
        settings.max_steps,
        settings.attempts,
        settings.test_timeout,
        settings.max_seconds,
    ) == ("m", "http://openai/v1", "text", 9, 2, 5.0, 300.0)
    both = SettingsSources(tmp_path, env={**env, "FIXLOOP_BASE_URL": "http://mine/v1"}).resolve()[0]
    assert both.base_url == "http://mine/v1"


def test_each_workspace_folder_has_its_own_client_settings(tmp_path: Path):
    """workspace/configuration answers per folder; the python of initializationOptions (picked for the
    first folder) is not inherited by a folder that answered for itself."""
    from fixloop.lsp.settings import SettingsState

    state = SettingsState()
    state.init_options = {"python": "/first/.venv/bin/python", "maxSteps": 7}
    alpha, beta = tmp_path / "alpha", tmp_path / "beta"
    state.folder_config = {alpha: {"model": "for-alpha"}, beta: {"model": "for-beta", "python": "/b/python"}}
    settings_alpha, _ = state.resolve(alpha)
    settings_beta, _ = state.resolve(beta)
    assert (settings_alpha.model, settings_alpha.python, settings_alpha.max_steps) == ("for-alpha", "", 7)
    assert (settings_beta.model, settings_beta.python) == ("for-beta", "/b/python")
    unanswered, _ = state.resolve(tmp_path / "gamma")
    assert unanswered.python == "/first/.venv/bin/python"
