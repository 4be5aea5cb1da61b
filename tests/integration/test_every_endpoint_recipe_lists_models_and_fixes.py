"""Each endpoint recipe of the README (OpenAI, Azure OpenAI, Ollama, LM Studio, vLLM, llama.cpp's server),
set up exactly as the recipe says against a scripted server answering as that server does: `fixloop models`
lists its model, a fix lands (through the text protocol where the server refuses tools), `temperature` is
sent only when set (by the user or by the model family's profile), and a misnamed model, a rejected key or
a dead endpoint ends the run in one line before any turn."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from fixloop.cli import main
from fixloop.config import load_settings
from fixloop.engine import FixRequest, FixRun
from fixloop.errors import ModelError
from fixloop.events import Event, Notice
from fixloop.model.profiles import profile_for
from scripted_model import ScriptedModelServer
from scripted_model.flavours import AZURE_API_VERSION, AZURE_KEY, OPENAI_KEY, VLLM_KEY
from support import fix_script, load_fix, text_fix_script

TARGET = tuple(load_fix("demo")["test_ids"])


@dataclass(frozen=True)
class Recipe:
    """The README recipe: the server's flavour, its model, and the environment the recipe sets."""

    flavour: str
    model: str
    env: dict[str, str] = field(default_factory=dict)  # besides FIXLOOP_BASE_URL and FIXLOOP_MODEL
    tools: bool = True  # the server takes native tool calls as the recipe starts it


RECIPES = {
    "openai": Recipe("openai", "gpt-4o-mini", {"OPENAI_API_KEY": OPENAI_KEY}),
    "azure": Recipe(
        "azure", "fixloop-gpt-4o", {"FIXLOOP_API_KEY": AZURE_KEY, "FIXLOOP_API_VERSION": AZURE_API_VERSION}
    ),
    "ollama": Recipe("ollama", "qwen2.5-coder:7b"),
    "lmstudio": Recipe("lmstudio", "qwen2.5-coder-7b-instruct"),
    "vllm": Recipe("vllm", "Qwen/Qwen2.5-Coder-7B-Instruct", {"FIXLOOP_API_KEY": VLLM_KEY}, tools=False),
    "llamacpp": Recipe("llamacpp", "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", tools=False),
}


@pytest.fixture
def recipe_env(monkeypatch: pytest.MonkeyPatch):
    """`recipe_env(recipe, server, model=None)`: the process environment the recipe sets, and nothing else."""
    for name in (
        "FIXLOOP_API_KEY",
        "OPENAI_API_KEY",
        "FIXLOOP_API_VERSION",
        "OPENAI_API_VERSION",
        "FIXLOOP_MODEL",
        "FIXLOOP_BASE_URL",
        "OPENAI_BASE_URL",
        "FIXLOOP_TEMPERATURE",
    ):
        monkeypatch.delenv(name, raising=False)

    def apply(recipe: Recipe, server: ScriptedModelServer, model: str | None = None) -> dict[str, str]:
        env = {"FIXLOOP_BASE_URL": server.base_url, "FIXLOOP_MODEL": model or recipe.model, **recipe.env}
        env["FIXLOOP_MUTANTS"] = "off"  # the recipe's model is under test, not the one-token round
        env["FIXLOOP_POOL_SHARE"] = "0"  # the first verified fix ends the search
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        return env

    return apply


def _server(scripted_model, recipe: Recipe) -> ScriptedModelServer:
    turns = fix_script("demo") if recipe.tools else text_fix_script("demo")
    return scripted_model({"model": recipe.model, "turns": turns}, flavour=recipe.flavour)


async def _fix(root: Path, env: dict[str, str]) -> tuple[object, list[Event]]:
    settings = load_settings(root, {"testTimeout": 20}, env=env)
    events: list[Event] = []
    return await FixRun(FixRequest(root, TARGET), settings, events.append).execute(), events


@pytest.mark.parametrize("name", list(RECIPES))
async def test_the_recipe_lists_the_model_and_fixes_the_demo(
    name, scripted_model, fixture_project, recipe_env, capsys
):
    recipe = RECIPES[name]
    server = _server(scripted_model, recipe)
    env = recipe_env(recipe, server)
    assert await asyncio.to_thread(main, ["models"]) == 0  # it runs its own event loop
    listed = capsys.readouterr().out.split()
    assert recipe.model in listed or name == "azure", listed  # Azure lists models, not deployments

    result, events = await _fix(fixture_project("demo"), env)
    assert result.status == "fixed", (result.summary, server.failures)
    bodies = server.requests
    profile = profile_for(recipe.model).values  # a known family's defaults, else temperature unsent
    best = "unsent" if profile.get("temperature") is None else profile["temperature"]
    temperatures = [body.get("temperature", "unsent") for body in bodies]
    assert temperatures[0] == best and set(temperatures) <= {best, profile.get("sample_temperature")}
    switched = [e.text for e in events if isinstance(e, Notice) and "text protocol" in e.text]
    # A profile's code round (the opening prompt alone) asks for code and sends no schemas; the turns do.
    code_round = [body for body in bodies if len(body["messages"]) == 2 and "tools" not in body]
    turns = [body for body in bodies if body not in code_round]
    if recipe.tools:
        assert all(body.get("tools") for body in turns) and not switched
    else:  # the refused first request with tools never reached the script: every served turn is text
        assert not any(body.get("tools") for body in turns) and (switched or not turns)
    assert result.prompt_tokens > 0 and result.completion_tokens > 0


@pytest.mark.parametrize("name", ["openai", "azure", "ollama", "vllm"])
async def test_a_misnamed_model_fails_before_any_turn(name, scripted_model, fixture_project, recipe_env):
    recipe = RECIPES[name]
    server = _server(scripted_model, recipe)
    env = recipe_env(recipe, server, model="no-such-model")
    if name == "azure":  # Azure names the deployment in the URL (and ignores the body's model)
        env["FIXLOOP_BASE_URL"] = server.base_url.replace(recipe.model, "no-such-model")
    with pytest.raises(ModelError) as raised:
        await _fix(fixture_project("demo"), env)
    message = raised.value.message
    assert "\n" not in message and "no-such-model" in message, message
    assert ("no such deployment" in message) if name == "azure" else (recipe.model in message), message
    assert server.requests == []


async def test_a_server_that_answers_to_any_name_is_not_refused(scripted_model, fixture_project, recipe_env):
    recipe = RECIPES["llamacpp"]
    server = _server(scripted_model, recipe)
    result, _ = await _fix(fixture_project("demo"), recipe_env(recipe, server, model="whatever-i-like"))
    assert result.status == "fixed" and len(server.warmups) >= 1  # the 1-token call decided


async def test_a_wrong_key_fails_before_any_turn(scripted_model, fixture_project, recipe_env, monkeypatch):
    recipe = RECIPES["openai"]
    server = _server(scripted_model, recipe)
    env = recipe_env(recipe, server)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    with pytest.raises(ModelError, match=r"401 from .*FIXLOOP_API_KEY"):
        await _fix(fixture_project("demo"), env)
    assert server.requests == []


def test_a_dead_endpoint_is_one_line_and_exit_2(fixture_project, recipe_env, capsys):
    root = fixture_project("demo")
    dead = "http://127.0.0.1:9/v1"
    assert main(["fix", TARGET[0], "--root", str(root), "--base-url", dead, "--model", "m", "-q"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(
        "fixloop: cannot reach http://127.0.0.1:9/v1: connection refused"
    ), err


@pytest.mark.parametrize(
    ("model", "flags", "sent"),
    [
        ("o3-mini", [], "unsent"),  # a reasoning model: its profile leaves temperature out
        ("my-finetune", [], "unsent"),  # no profile: the endpoint's own default
        ("o3-mini", ["--temperature", "0.2"], 0.2),  # set: sent
    ],
)
def test_temperature_is_sent_only_when_set(model, flags, sent, scripted_model, fixture_project, recipe_env):
    recipe = Recipe("openai", model, {"OPENAI_API_KEY": OPENAI_KEY})
    server = _server(scripted_model, recipe)
    recipe_env(recipe, server)
    root = fixture_project("demo")
    assert main(["fix", TARGET[0], "--root", str(root), "-q", *flags]) == 0
    assert {body.get("temperature", "unsent") for body in server.requests} == {sent}
