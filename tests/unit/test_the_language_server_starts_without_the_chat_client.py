"""The language server starts, and gets a local model ready, without loading the OpenAI client library and
the agent with it (about half a CPU second of each start): they load with the first fix. The CLI's fix
does load them, and the engine's names stay where every face finds them."""

from __future__ import annotations

import subprocess
import sys

LOADED = "import sys; print(sorted(m for m in ('openai', 'fixloop.agent.loop') if m in sys.modules))"


def modules_after(statement: str) -> str:
    code = f"{statement}\n{LOADED}"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    return done.stdout.strip()


def test_the_server_and_its_model_preparation_load_no_chat_client() -> None:
    statement = "import fixloop.lsp.features\nfrom fixloop.engine import prepare_model"
    assert modules_after(statement) == "[]"


def test_the_first_fix_loads_them() -> None:
    assert modules_after("from fixloop.engine import FixRun") == "['fixloop.agent.loop', 'openai']"


def test_the_engine_names_are_all_there_and_a_wrong_one_is_an_attribute_error() -> None:
    import fixloop.engine as engine

    assert sorted(engine.__all__) == sorted(engine._HOMES)  # each exported name has its module
    assert all(callable(getattr(engine, name)) for name in engine.__all__)
    try:
        engine.NoSuchThing  # noqa: B018
    except AttributeError as error:
        assert "NoSuchThing" in str(error)
    else:
        raise AssertionError("an unknown name must raise AttributeError")
