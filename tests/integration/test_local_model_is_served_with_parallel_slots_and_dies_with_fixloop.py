"""The managed model on llama.cpp's own server: slots chosen from the round and the memory, the command line
it gets, llama-cpp-python's server where it is not built, a round's candidates drawn in one request, and
no server left behind when `fixloop fix` or the language server ends, however it ends.

The child is tests/fake_llama_server.py behind an executable named llama-server: a real process on a real
port that takes llama-server's flags and honours `n` up to `--parallel`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fixloop.config import Settings
from fixloop.errors import ConfigError, ModelError
from fixloop.model.catalog import get_model
from fixloop.model.client import ChatModel
from fixloop.model.llama_cpp_python import _SERVER_MODULES, LLAMA_PYTHON_ENV
from fixloop.model.llama_server import (
    KV_BYTES_PER_TOKEN,
    LLAMA_CPP_PYTHON,
    LLAMA_SERVER,
    LLAMA_SERVER_ENV,
    SMALL_KV_BYTES_PER_TOKEN,
    Serving,
    plan_serving,
)
from fixloop.model.local import (
    LocalModelServer,
    ensure_local_server,
    free_port,
    local_slots,
    resolve_local_model,
    serving_line,
    stop_local_server,
)
from fixloop.model.loopback import loopback_request
from fixloop.model.prompt_store import prompt_file, save_prompt
from fixloop.model.request_options import Sampling
from fixloop.model.warm_up import start_warm_up
from support import load_fix

FAKE = Path(__file__).resolve().parents[1] / "fake_llama_server.py"
GIB = 1 << 30


@pytest.fixture
def fake_llama_server(tmp_path: Path) -> Path:
    exe = tmp_path / "bin" / "llama-server"
    exe.parent.mkdir()
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
    exe.chmod(0o755)
    return exe


@pytest.fixture
def record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_llama_server: Path) -> Path:
    """The fake llama-server is the managed model's server, with a default model file of the right size."""
    models = tmp_path / "models"
    models.mkdir()
    info = get_model()
    with (models / info.file_name).open("wb") as sparse:
        sparse.truncate(info.size)
    path = tmp_path / "record.jsonl"
    monkeypatch.setenv("FAKE_LLAMA_RECORD", str(path))
    monkeypatch.setenv("FIXLOOP_MODELS_DIR", str(models))
    monkeypatch.setenv(LLAMA_SERVER_ENV, str(fake_llama_server))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # kept prompts stay out of the user's cache
    return path


def entries(record: Path) -> list[dict]:
    return [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []


def plan(memory: int, samples: int = 6, context: int | None = None) -> Serving:
    return plan_serving(
        samples=samples,
        context_chars=24_000,
        threads=2,
        context=context,
        python_program=("python", "-m", "llama_cpp.server"),
        model_size=1_117_320_768,
        memory=memory,
    )


def test_slots_follow_the_round_and_shrink_where_memory_is_short(
    record: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    roomy = plan(8 * GIB)
    assert not roomy.speculative and "--spec-type" not in roomy.args(Path("m.gguf"), "m", 1234)
    monkeypatch.setenv("FIXLOOP_LLAMA_SPECULATION", "on")  # n-gram speculation only when asked for
    assert "ngram-simple" in plan(8 * GIB).args(Path("m.gguf"), "m", 1234)
    assert (roomy.kind, roomy.slots, roomy.threads) == (LLAMA_SERVER, 5, 2)  # a round draws 6 - 1 at once
    # one prompt (24,000 characters at 3 a token, and the fixed prefix) plus a 2,048-token reply a slot
    assert roomy.context == 20_480
    assert roomy.cache_type == "f16" and "f16" in roomy.args(Path("m.gguf"), "m", 1234)
    short = plan(int(1.6 * GIB))  # not even one slot's f16 cache fits: a q8_0 one, half the bytes
    assert 1 <= short.slots < roomy.slots and short.context < roomy.context and short.cache_type == "q8_0"
    assert short.context * SMALL_KV_BYTES_PER_TOKEN <= 256 << 20 < short.context * KV_BYTES_PER_TOKEN
    argv = short.args(Path("m.gguf"), "m", 1234)
    assert argv[argv.index("--cache-type-v") + 1] == "q8_0" and argv[argv.index("--flash-attn") + 1] == "on"
    assert "q8_0: memory is short" in short.describe()
    middle = plan(3 * GIB)  # 3 f16 slots would fit, all 5 in q8_0: short memory goes to q8_0
    assert middle.cache_type == "q8_0" and middle.slots > 2
    assert plan(8 * GIB, samples=1).slots == 1
    assert plan(8 * GIB, samples=20).slots == 8
    assert plan(8 * GIB, context=4096).context == 4096  # localContext overrides the sizing
    assert local_slots(Settings(model="local")) >= 1


def test_without_llama_server_the_old_server_serves_one_at_a_time(
    record: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(LLAMA_SERVER_ENV, "none")
    old = plan(8 * GIB)
    assert (old.kind, old.slots, old.program) == (LLAMA_CPP_PYTHON, 1, ("python", "-m", "llama_cpp.server"))
    assert old.context == 14_336  # the run's prompt and one reply, not a fixed 16k
    assert local_slots(Settings(model="local")) == 1
    assert serving_line().startswith("llama-cpp-python's server (one request at a time")
    assert "--n_ctx" in old.args(Path("m.gguf"), "m", 1234)


def test_a_wrong_llama_server_path_is_one_line(record: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LLAMA_SERVER_ENV, "/no/such/llama-server")
    with pytest.raises(ConfigError) as raised:
        resolve_local_model("local")
    assert str(raised.value) == (
        f"${LLAMA_SERVER_ENV} is /no/such/llama-server, which is not an executable: "
        "point it at llama-server, or unset it"
    )


async def test_llama_server_gets_slots_a_shared_cache_and_answers_n_at_once(
    record: Path, fake_llama_server: Path
) -> None:
    try:
        base_url, name = await ensure_local_server(Settings(model="local", local_threads=2))
        assert await ensure_local_server(Settings(model="local:1.5b", local_threads=2)) == (base_url, name)
        (launch,) = [entry for entry in entries(record) if "argv" in entry]
        argv = launch["argv"]

        def value(flag: str) -> str:
            return argv[argv.index(flag) + 1]

        slots = int(value("--parallel"))
        assert slots == local_slots(Settings(model="local", local_threads=2)) >= 1
        assert (value("--alias"), value("--host"), value("--threads")) == (name, "127.0.0.1", "2")
        assert value("--model").endswith(get_model().file_name)
        assert {"--kv-unified", "--cont-batching", "--no-webui"} <= set(argv)
        assert (value("--cache-type-k"), value("--cache-type-v"), value("--flash-attn")) == (
            "f16",
            "f16",
            "off",
        )
        assert value("--cache-ram") == "0"  # no host-memory prompt cache (8 GiB by default)
        assert value("--load-mode") == "none"  # no mapped model file resident beside the repacked weights
        assert int(value("--ctx-size")) >= 4096
        assert serving_line(Settings(model="local", local_threads=2)).startswith(
            f"llama.cpp's llama-server ({fake_llama_server}): {slots} slot(s)"
        )
        model = ChatModel(base_url=base_url, model=name, api_key=None, stream=False)
        try:
            replies = await model.complete_choices(
                [{"role": "user", "content": "hi"}], Sampling(0.8, 1, n=slots)
            )
            assert len(replies) == slots
            with pytest.raises(ModelError):
                await model.complete_choices(
                    [{"role": "user", "content": "hi"}], Sampling(0.8, 1, n=slots + 1)
                )
        finally:
            await model.close()
    finally:
        await stop_local_server()
    assert wait_gone(launch["pid"])


# ---- every server process gone when fixloop ends ---------------------------------------------------


def gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state in ("Z", "X")


def wait_gone(pid: int, seconds: float = 15) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not gone(pid):
        time.sleep(0.05)
    return gone(pid)


def wait_for(record: Path, what: str, seconds: float = 60) -> dict:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = [entry for entry in entries(record) if what in entry]
        if found:
            return found[0]
        time.sleep(0.1)
    raise AssertionError(f"no {what!r} in the fake server's record: {entries(record)}")


def child_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_") and k != "FIXLOOP_MODEL"}
    return {
        **env,
        "FIXLOOP_MUTANTS": "off",
        "FIXLOOP_POOL_SHARE": "0",
        **extra,
    }  # the model's requests are under test


def fix_demo(root: Path) -> list[str]:
    """`fixloop fix` of the demo project's failing test with the managed local model."""
    return [
        sys.executable,
        "-m",
        "fixloop",
        "fix",
        *load_fix("demo")["test_ids"],
        "--root",
        str(root),
        "--model",
        "local",
    ]


def fix_demo_not_fixed(root: Path, settings: str, reply: str, steps: str = "1", guess: str = "") -> None:
    """`fixloop fix` of the demo with `settings` added to its [tool.fixloop] and every reply `reply` (a
    round's best guess `guess`, where given): it must end not fixed."""
    with (root / "pyproject.toml").open("a", encoding="utf-8") as pyproject:
        pyproject.write(f"\n[tool.fixloop]\n{settings}")
    done = subprocess.run(
        fix_demo(root),
        capture_output=True,
        text=True,
        env=child_env(FIXLOOP_MAX_STEPS=steps, FAKE_LLAMA_REPLY=reply, FAKE_LLAMA_GUESS_REPLY=guess),
        timeout=240,
    )
    assert done.returncode != 0 and "not fixed" in done.stderr, done.stderr


def test_a_fix_run_draws_the_sampled_candidates_in_one_request_and_leaves_no_server(
    record: Path, fixture_project
) -> None:
    # a set context: no slot given up for memory
    fix_demo_not_fixed(fixture_project("demo"), "localContext = 20480\n", "I cannot tell.", steps="2")
    launch = wait_for(record, "argv")
    slots = int(launch["argv"][launch["argv"].index("--parallel") + 1])
    requests = [entry for entry in entries(record) if "n" in entry]
    draws = [entry for entry in requests if entry["max_tokens"] != 1]  # the warm-up aside
    assert slots == 5 and draws and draws[0]["n"] == 1  # the best guess, alone
    batches = [entry for entry in requests if entry["n"] == 5]  # the other five in one request, each reply
    assert batches and batches[0]["max_tokens"] == 160, requests  # capped near the best guess's length
    assert wait_gone(launch["pid"]), "the model server outlived `fixloop fix`"


def test_the_copies_back_of_a_batch_are_asked_again_in_one_request(record: Path, fixture_project) -> None:
    """llama-server's slots share no prompt: five like follow-ups sent at once would each read the whole
    prompt again on a slot of their own (190 s for one round of a library case on 2 cores). With
    `reaskUnchanged` on, they go as one request with `n`, the prompt read once."""
    root = fixture_project("demo")
    source = (root / "mathutils.py").read_text()
    copy_back = "mathutils.py\n```python\n" + source + "```\n"
    wrong = "mathutils.py\n```python\n" + source.replace("result += i", "result -= i") + "```\n"
    # the best guess a wrong fix (judged, rejected), every other reply a copy back (a best guess copied back
    # twice would end the round before its batch)
    settings = "localContext = 20480\nsampleRounds = 0\nreaskUnchanged = true\n"  # off by default
    fix_demo_not_fixed(root, settings, copy_back, guess=wrong)
    draws = [entry for entry in entries(record) if "n" in entry and entry["max_tokens"] != 1]
    asked = [entry["n"] for entry in draws if "changes nothing" in entry["last"]]
    assert [entry["n"] for entry in draws[:3]] == [1, 5, 5], draws  # guess, batch, its copies re-asked
    assert asked[:1] == [5], draws


def test_a_round_larger_than_the_slots_asks_for_no_more_than_the_slots_at_once(
    record: Path, fixture_project
) -> None:
    """llama-server refuses an `n` above its slots (HTTP 400): a round of 10 on 8 slots draws its best guess,
    a batch of 8 and one more, where it used to lose the batch and draw the nine one at a time."""
    settings = "localContext = 20480\nsamples = 10\nsampleRounds = 0\n"
    fix_demo_not_fixed(fixture_project("demo"), settings, "I cannot tell.")
    launch = wait_for(record, "argv")
    assert launch["argv"][launch["argv"].index("--parallel") + 1] == "8"
    draws = [entry["n"] for entry in entries(record) if "n" in entry and entry["max_tokens"] != 1]
    assert draws[:3] == [1, 8, 1] and max(draws) == 8, draws


def test_the_last_prompt_is_kept_on_disk_for_the_next_process(
    record: Path, fixture_project, tmp_path
) -> None:
    cache = tmp_path / "cache"
    env = child_env(FIXLOOP_MAX_STEPS="1", FAKE_LLAMA_REPLY="I cannot tell.", XDG_CACHE_HOME=str(cache))
    root = fixture_project("demo")
    for _ in range(2):
        subprocess.run(fix_demo(root), capture_output=True, text=True, env=env, timeout=240)
    argv = [entry["argv"] for entry in entries(record) if "argv" in entry]
    assert len(argv) == 2 and all(a[a.index("--slot-prompt-similarity") + 1] == "0.01" for a in argv)
    assert argv[0][argv[0].index("--slot-save-path") + 1] == str(cache / "fixloop" / "prompts")
    actions = [(entry["slot"], entry["id"], entry["found"]) for entry in entries(record) if "slot" in entry]
    # the first process finds no prompt and keeps the slot that read its first request (the warm-up's, which
    # the request extended); the second restores it into slot 0, where its first request finds it
    assert actions == [("restore", 0, False), ("save", 0, False), ("restore", 0, True), ("save", 0, True)]
    every = entries(record)
    second = [i for i, entry in enumerate(every) if "argv" in entry][1]
    firsts = [
        next(entry["slots"] for entry in part if entry.get("max_tokens") not in (None, 1))
        for part in (every[:second], every[second:])
    ]
    assert firsts == [[0], [0]], firsts
    warm_ups = [
        sum(entry.get("max_tokens") == 1 for entry in part) for part in (every[:second], every[second:])
    ]
    assert warm_ups == [1, 0]  # a restored prompt is not cut back to its prefix by a warm-up
    [kept] = (cache / "fixloop" / "prompts").iterdir()
    assert kept.name.startswith("qwen2.5-coder-1.5b-instruct-q4_k_m-ctx") and kept.name.endswith("-f16.bin")
    assert "The failing test: tests/test_mathutils.py::test_factorial_of_five" in kept.read_text()


def test_the_runs_first_prompt_is_kept_as_soon_as_its_reply_is_in(record: Path, fixture_project) -> None:
    """Kept then, not when the server stops: by then the run's later prompts may fill other slots fuller."""
    env = child_env(FIXLOOP_MAX_STEPS="3", FAKE_LLAMA_REPLY="I cannot tell.", FAKE_LLAMA_DELAY="4")
    fix = subprocess.Popen(
        fix_demo(fixture_project("demo")), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
    )
    try:
        deadline = time.monotonic() + 90
        while len([e for e in entries(record) if e.get("max_tokens") not in (None, 1)]) < 2:
            assert time.monotonic() < deadline and fix.poll() is None, entries(record)
            time.sleep(0.1)
        time.sleep(1.0)  # the second request waits 4 s for its reply: the run is still on
        saves = [entry for entry in entries(record) if entry.get("slot") == "save"]
        assert fix.poll() is None and len(saves) == 1 and saves[0]["id"] == 0, entries(record)
    finally:
        fix.kill()
        fix.wait()


def start_fake(fake_llama_server: Path, port: int, saved: Path, **env: str) -> subprocess.Popen:
    """The fake llama-server on `port`, 4 slots, its slot files in `saved`, answering."""
    argv = [str(fake_llama_server), "--host", "127.0.0.1", "--port", str(port), "--parallel", "4"]
    server = subprocess.Popen(
        [*argv, "--slot-save-path", str(saved)],
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while loopback_request(port, "GET /v1/models") is None:
        assert time.monotonic() < deadline and server.poll() is None
        time.sleep(0.1)
    return server


@pytest.mark.parametrize("named", [True, False], ids=["prompts named", "prompts not named"])
def test_the_slot_kept_is_the_one_holding_the_runs_first_prompt_not_the_fullest(
    fake_llama_server: Path, tmp_path: Path, named: bool
) -> None:
    """llama-server names a slot's prompt in `GET /slots` only with LLAMA_SERVER_SLOTS_DEBUG set (fixloop
    sets it); without it, no slot is known to hold the run's prompt, and nothing is kept early."""
    port, saved = free_port(), tmp_path / "prompts"
    saved.mkdir()
    debug = {"LLAMA_SERVER_SLOTS_DEBUG": "1"} if named else {"LLAMA_SERVER_SLOTS_DEBUG": ""}
    server = start_fake(fake_llama_server, port, saved, **debug)
    # in a slot of its own (it starts otherwise), as a later round drawn beside another request
    later_round = "Round 2, tried and failed for The failing test: t.py::test_a. " * 5
    try:
        for text in ("The failing test: t.py::test_a", "another task, with a much longer prompt " * 20):
            body = {"messages": [{"role": "user", "content": text}], "max_tokens": 8}
            assert loopback_request(port, "POST /v1/chat/completions", json.dumps(body).encode())
        # a later round of the run (or of an earlier run on the same test) holds the test id too, and more
        body = {"messages": [{"role": "user", "content": later_round}], "max_tokens": 8}
        assert loopback_request(port, "POST /v1/chat/completions", json.dumps(body).encode())
        assert save_prompt(port, "first.bin", timeout=5, holding="t.py::test_a") is named
        assert save_prompt(port, "fullest.bin", timeout=5)
        assert (saved / "fullest.bin").read_text().startswith("another task")
        assert not save_prompt(port, "none.bin", timeout=5, holding="t.py::test_b")
        if named:
            assert (saved / "first.bin").read_text() == "The failing test: t.py::test_a"
    finally:
        server.kill()
        server.wait()


def test_the_managed_llama_server_is_started_naming_its_slots_prompts(tmp_path: Path) -> None:
    """Without LLAMA_SERVER_SLOTS_DEBUG the run's first prompt is never found and never kept early."""
    program = (str(tmp_path / "llama-server"),)
    assert Serving(LLAMA_SERVER, program, 2, 4096, 2, prompt_dir=tmp_path).environment() == {
        "LLAMA_SERVER_SLOTS_DEBUG": "1"
    }
    assert Serving(LLAMA_SERVER, program, 2, 4096, 2).environment() == {}  # no slot files, nothing to find


@pytest.mark.parametrize("how", ["SIGINT", "SIGTERM", "SIGKILL"])
def test_the_server_is_gone_when_fixloop_fix_is_stopped(record: Path, fixture_project, how: str) -> None:
    root = fixture_project("demo")
    fix = subprocess.Popen(
        fix_demo(root),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=child_env(FAKE_LLAMA_DELAY="60"),
    )
    try:
        launch = wait_for(record, "argv")
        wait_for(record, "n")  # a request is in flight
        fix.send_signal(getattr(signal, how))
        fix.wait(timeout=30)
        assert wait_gone(launch["pid"]), f"the model server outlived `fixloop fix` stopped by {how}"
    finally:
        if fix.poll() is None:
            fix.kill()
            fix.wait()


def lsp_message(payload: dict) -> bytes:
    body = json.dumps(payload).encode()
    return f"Content-Length: {len(body)}\r\n\r\n".encode() + body


@pytest.mark.parametrize("how", ["editor closes the pipe", "SIGKILL", "SIGTERM"])
def test_the_server_is_gone_when_the_language_server_goes(record: Path, tmp_path: Path, how: str) -> None:
    serve = subprocess.Popen(
        [sys.executable, "-m", "fixloop", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=tmp_path,
        env=child_env(FIXLOOP_MODEL="local"),
    )
    assert serve.stdin is not None
    try:
        init = {"processId": os.getpid(), "rootUri": tmp_path.as_uri(), "capabilities": {}}
        serve.stdin.write(lsp_message({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}))
        serve.stdin.write(lsp_message({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        serve.stdin.flush()
        launch = wait_for(record, "argv")  # started (and warmed) as the language server starts
        if how == "editor closes the pipe":
            serve.stdin.close()
        else:
            serve.send_signal(getattr(signal, how))
        serve.wait(timeout=30)
        assert wait_gone(launch["pid"]), f"the model server outlived the language server ({how})"
    finally:
        if serve.poll() is None:
            serve.kill()
            serve.wait()


def test_doctor_says_which_server_runs(record: Path, tmp_path: Path, fake_llama_server: Path) -> None:
    def endpoint_line(**env: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "fixloop", "doctor", "--model", "local", "--root", str(tmp_path)],
            capture_output=True,
            text=True,
            env=child_env(**env),
            timeout=120,
        )
        return next(line for line in done.stdout.splitlines() if "endpoint" in line)

    assert f"llama.cpp's llama-server ({fake_llama_server}):" in endpoint_line()
    stubs = tmp_path / "stubs"
    for module in _SERVER_MODULES:
        (stubs / module).mkdir(parents=True)
        (stubs / module / "__init__.py").write_text("")
    python = tmp_path / "llama-python"
    python.write_text(f'#!/bin/sh\nPYTHONPATH="{stubs}" exec "{sys.executable}" -S "$@"\n')
    python.chmod(0o755)
    fallback = endpoint_line(**{LLAMA_SERVER_ENV: "none", LLAMA_PYTHON_ENV: str(python)})
    assert "llama-cpp-python's server (one request at a time" in fallback


async def test_a_stopped_server_that_restored_a_prompt_is_warmed_again_where_it_stood(
    tmp_path: Path, fake_llama_server: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server that restored the last prompt is sent no warm-up; once it has stopped, the next server at
    its address is (it restored nothing the warm-up could cut)."""
    monkeypatch.setenv("FAKE_LLAMA_RECORD", str(tmp_path / "record.jsonl"))
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    model = tmp_path / "model.gguf"
    serving = Serving(LLAMA_SERVER, (str(fake_llama_server),), 1, 4096, 2, prompt_dir=prompts)
    kept = prompts / prompt_file(model, serving.context, serving.cache_type)
    kept.write_bytes(b"kept")  # the last process's prompt
    server = LocalModelServer(model, alias="fake-model", serving=serving, log_path=tmp_path / "server.log")
    prefix = [{"role": "system", "content": "You fix failing tests."}]
    try:
        url = await server.start(timeout=30)
        assert start_warm_up(url, "fake-model", None, prefix, None) is None
    finally:
        await server.stop()
    warm_up = start_warm_up(url, "fake-model", None, prefix, [{"type": "function"}], timeout=1.0)
    assert warm_up is not None
    await warm_up  # nothing listens there now: a failed warm-up is not the run's failure
