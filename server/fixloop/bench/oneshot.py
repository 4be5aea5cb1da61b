"""The `oneshot` baseline: one prompt (failure, warm-start code); the reply's code applied once, unchecked."""

from __future__ import annotations

import asyncio
import re
import uuid
from pathlib import Path

from fixloop.agent.warm_start import build_warm_start
from fixloop.bench.cases import BenchCase
from fixloop.bench.judge import is_test_file
from fixloop.bench.mode_run import ModeRun
from fixloop.config import Settings
from fixloop.engine import is_local, model_endpoint, open_chat_model
from fixloop.errors import FixloopError
from fixloop.model.client import ChatModel
from fixloop.model.replies import ModelReply
from fixloop.pytest_runner import PytestRunner
from fixloop.result import FileChange
from fixloop.shadow import unified_diff
from fixloop.tools.code_reply import apply_code_reply, code_blocks
from fixloop.transcript import Transcript

SYSTEM = (
    "You are an expert Python engineer. You fix bugs in the user's code so that the failing tests "
    "pass. The tests are right: never change them."
)
ASK = """Reply with the corrected code: each function or method you change, whole (from its `def` line, \
decorators included, to its end), in a ```python block, without line numbers. Put the file's path on the \
line before each block. For example:

path/to/module.py
```python
def the_function(argument):
    ...
```"""
_MENTIONED = re.compile(r"[\w./-]+\.py\b")  # files the prompt shows or names (tests are left out later)


def oneshot_prompt(test_ids: tuple[str, ...], warm_start: str) -> str:
    which = "test" if len(test_ids) == 1 else "tests"
    parts = (f"The failing {which}: {', '.join(test_ids)}", warm_start.strip(), ASK)
    return "\n\n".join(part for part in parts if part)


def _code_files(root: Path, paths: list[str]) -> dict[str, str]:
    """The texts of the named project files that are code, not tests, by path relative to `root`."""
    top = root.resolve()
    files = {}
    for named in dict.fromkeys(paths):
        path = (top / named).resolve()
        if not path.is_relative_to(top) or not path.is_file():
            continue
        rel = path.relative_to(top).as_posix()
        if rel in files or is_test_file(rel):
            continue
        try:
            with path.open(encoding="utf-8", newline="") as file:  # CRLF kept: the diff must apply
                files[rel] = file.read()
        except (OSError, UnicodeDecodeError):
            continue
    return files


async def run_oneshot(case: BenchCase, root: Path, settings: Settings) -> ModeRun:
    """One model call; its code applied by AST to the files the prompt showed (or the reply names)."""
    meta = {
        "mode": "oneshot",
        "root": str(root),
        "model": settings.model,
        "test_ids": list(case.failing_test_ids),
    }
    transcript = Transcript.open(uuid.uuid4().hex[:12], meta)
    runner = PytestRunner(root, settings.test_command, settings.test_timeout)
    model: ChatModel | None = None
    reply: ModelReply | None = None
    try:
        failing = await runner.run(case.failing_test_ids)
        warm = await asyncio.to_thread(build_warm_start, root, failing, list(case.failing_test_ids))
        base_url, name = await model_endpoint(settings)
        model = open_chat_model(settings, base_url, name)
        reply = await _ask(model, oneshot_prompt(case.failing_test_ids, warm), transcript, is_local(settings))
        diff, summary = await _applied(root, warm, reply, transcript)
        return ModeRun(
            False, diff, summary, 1, 0, *_tokens(reply), model.seconds, runner.seconds, str(transcript.path)
        )
    except FixloopError as error:
        transcript.write("error", message=error.message)
        seconds = model.seconds if model else 0.0
        figures = (1 if model else 0, 0, *_tokens(reply), seconds, runner.seconds, str(transcript.path))
        return ModeRun(False, "", "", *figures, error=error.message)
    finally:
        if model is not None:
            await asyncio.shield(model.close())
        transcript.close()


async def _ask(model: ChatModel, prompt: str, transcript: Transcript, local: bool) -> ModelReply:
    """The one model call, its prompt and reply written to the transcript."""
    transcript.write("prompt", system=SYSTEM, user=prompt, local=local)
    reply = await model.complete([{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}])
    prompt_tokens, completion_tokens = _tokens(reply)
    transcript.write(
        "reply",
        text=reply.content,
        finish_reason=reply.finish_reason,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
    )
    return reply


async def _applied(root: Path, warm: str, reply: ModelReply, transcript: Transcript) -> tuple[str, str]:
    """The reply's code applied to the files the prompt showed or the reply names: the diff and a summary."""
    shown = _MENTIONED.findall(warm) + [block.path for block in code_blocks(reply.content) if block.path]
    files = await asyncio.to_thread(_code_files, root, shown)
    edit = apply_code_reply(reply.content, files)
    changes = [FileChange(path, files[path], text) for path, text in sorted(edit.files.items())]
    transcript.write(
        "result", diff=unified_diff(changes), applied=list(edit.applied), problems=list(edit.problems)
    )
    return unified_diff(changes), "; ".join(edit.applied) or "; ".join(edit.problems) or "no edit"


def _tokens(reply: ModelReply | None) -> tuple[int, int]:
    return (reply.prompt_tokens, reply.completion_tokens) if reply is not None else (0, 0)
