"""benchmarks/local_model.py's child: "today" serves llama-cpp-python as issue 18 found it, and a whole round
keeps drawing past a verified candidate but still stops on its time."""

from __future__ import annotations

import runpy
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from fixloop.agent import sampling
from fixloop.model import llama_server
from fixloop.model.llama_server import LLAMA_CPP_PYTHON, LLAMA_SERVER, Serving

BENCH = runpy.run_path(str(Path(__file__).resolve().parents[2] / "benchmarks" / "local_model.py"))


def test_today_is_llama_cpp_python_with_every_logit_kept_and_a_16k_context(monkeypatch) -> None:
    monkeypatch.setattr(Serving, "args", Serving.args)  # put back after the test
    fallback = Serving(LLAMA_CPP_PYTHON, ("python", "-m", "llama_cpp.server"), threads=2, context=14336)
    new = Serving(LLAMA_SERVER, ("llama-server",), threads=2, context=20480, slots=5)
    new_line = new.args(Path("m.gguf"), "local", 1)
    BENCH["serving_as_found"]()
    line = llama_server.Serving.args(fallback, Path("m.gguf"), "local", 1)
    assert "--logits_all" not in line and line[line.index("--n_ctx") + 1] == "16384"
    assert new.args(Path("m.gguf"), "local", 1) == new_line


def test_a_whole_round_draws_past_a_verified_candidate_but_not_past_its_time(monkeypatch) -> None:
    monkeypatch.setattr(sampling.CandidateSearch, "_should_stop", sampling.CandidateSearch._should_stop)
    search = SimpleNamespace(limits=sampling.SampleLimits(seconds=60))
    verified = SimpleNamespace(verified=["a candidate"], started=time.monotonic(), tokens=0)
    assert sampling.CandidateSearch._should_stop(search, verified)
    BENCH["drawing_whole_rounds"]()
    assert not sampling.CandidateSearch._should_stop(search, verified)
    assert verified.verified == ["a candidate"]  # the round's verdicts stay
    late = SimpleNamespace(verified=["a candidate"], started=time.monotonic() - 61, tokens=0)
    assert sampling.CandidateSearch._should_stop(search, late)


@pytest.mark.parametrize("serving", ["today", "old"])
def test_today_and_old_both_force_llama_cpp_python_only_today_as_found(serving: str) -> None:
    args = SimpleNamespace(llama_python="/py", llama_server="")
    env = BENCH["serving_env"](serving, args)
    assert env["FIXLOOP_LLAMA_SERVER"] == "none" and env["FIXLOOP_LLAMA_PYTHON"] == "/py"
    assert (BENCH["TODAY_ENV"] in env) is (serving == "today")
