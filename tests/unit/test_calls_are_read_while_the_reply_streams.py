"""While a reply streams: a call is known complete as soon as its form closes, the model moving on after
its calls ends the reply there (batches stay whole), only prose is shown, and echoed context is spotted."""

from __future__ import annotations

import json

import pytest

from fixloop.agent.echo import EchoIndex, echoed_chars
from fixloop.agent.reply_watch import ReplyWatch
from fixloop.agent.text_calls.stream import CallScanner

TOOLS = frozenset({"read_file", "edit_file", "run_tests", "list_files", "search", "submit", "write_file"})
EDIT = '{"name": "edit_file", "arguments": {"path": "m.py", "old_text": "a += i", "new_text": "a *= i"}}'
READ_A = '{"name": "read_file", "arguments": {"path": "a.py"}}'
READ_B = '{"name": "read_file", "arguments": {"path": "b.py"}}'
BABBLE = "\n\n### tests/test_m.py (lines 12-13) the test\n 12 | def test_m():\n" + "and more " * 30


def scan(text: str, step: int) -> tuple[CallScanner, int | None]:
    """Feed `text` in pieces of `step` characters; (scanner, characters fed when it said stop)."""
    scanner = CallScanner(TOOLS, {"read_file": "path"})
    for start in range(0, len(text), step):
        if scanner.feed(text[start : start + step]):
            return scanner, start + step
    return scanner, None


CASES = {
    "fenced json": (f"I will fix it.\n```json\n{EDIT}\n```", 1),
    "bare json": (READ_A, 1),
    "tool_call tag": ('Run them.\n<tool_call>\n{"name": "run_tests", "arguments": {}}\n</tool_call>', 1),
    "react with JSON input": ('Thought: read it\nAction: read_file\nAction Input: {"path": "a.py"}', 1),
    "react with plain input": ("Thought: read it\nAction: read_file\nAction Input: a.py\n", 1),
    "two fenced calls": (f"Both.\n```json\n{READ_A}\n```\n```json\n{READ_B}\n```", 2),
    "a list of two calls": (f"[{READ_A}, {READ_B}]", 2),
    "two tags": (f"<tool_call>\n{READ_A}\n</tool_call>\n<tool_call>\n{READ_B}\n</tool_call>", 2),
}


@pytest.mark.parametrize("step", [1, 3, 7, 10_000])
@pytest.mark.parametrize("name", list(CASES))
def test_the_reply_ends_after_its_complete_calls_once_the_model_moves_on(name: str, step: int) -> None:
    calls, count = CASES[name]
    scanner, stopped = scan(calls + BABBLE, step)
    assert stopped is not None, "the babble after the calls ends the reply"
    assert scanner.complete == count  # a batch stays whole
    kept = scanner.text[: scanner.keep]
    assert kept.strip() == calls.strip()  # the call and its closing fence or tag; nothing of the babble
    assert min(stopped, len(calls + BABBLE)) - len(calls) <= step + 6  # within a few characters of babble


@pytest.mark.parametrize("step", [1, 5])
def test_a_call_still_being_written_never_ends_the_reply(step: int) -> None:
    half = f"Fix.\n```json\n{EDIT}"[:-10]
    scanner, stopped = scan(half, step)
    assert stopped is None and scanner.complete == 0 and scanner.open_start is not None
    assert scanner.open_call() is not None and scanner.open_call()[0] == "edit_file"


def test_prose_code_and_json_that_is_no_call_go_on() -> None:
    text = (
        'The set {1, 2} and a list [3] and a dict {"a": 1}:\n'
        '```python\ndef f():\n    return {"k": 2}\n```\nStill thinking. Also, Actions speak.'
    )
    for step in (1, 4, len(text)):
        scanner, stopped = scan(text, step)
        assert stopped is None and scanner.complete == 0
        assert scanner.prose_end() >= len(text) - 1  # all of it is prose to show


def test_only_prose_is_shown_and_each_call_is_announced_once() -> None:
    text = f"I will fix the operator.\n```json\n{EDIT}\n```\n```json\n{READ_A}\n```" + BABBLE
    shown: list[str] = []
    calls: list[tuple[str, str]] = []
    watch = ReplyWatch(TOOLS, on_prose=shown.append, on_calling=lambda tool, on: calls.append((tool, on)))
    cut = None
    for start in range(0, len(text), 2):
        cut = watch.on_text(text[start : start + 2])
        if cut is not None:
            break
    assert cut is not None and cut.reason == "call"
    assert "".join(shown) == "I will fix the operator.\n"  # never a piece of a call, nor the babble
    assert calls == [("edit_file", "m.py"), ("read_file", "a.py")]


def test_calls_written_as_text_are_left_alone_when_only_native_calls_count() -> None:
    shown: list[str] = []
    watch = ReplyWatch(TOOLS, on_prose=shown.append, on_calling=lambda tool, on: None, read_text=False)
    assert watch.on_text(f"```json\n{READ_A}\n```\nmore") is None
    assert "".join(shown).endswith("more")


def test_text_after_a_complete_native_call_ends_the_reply() -> None:
    calls: list[tuple[str, str]] = []
    watch = ReplyWatch(
        TOOLS, on_prose=lambda text: None, on_calling=lambda tool, on: calls.append((tool, on))
    )
    assert watch.on_call(0, "read_file", '{"path": ') is None
    assert watch.on_call(0, "read_file", '{"path": "a.py"}') is None
    assert calls == [("read_file", "a.py")]
    cut = watch.on_text("Now I will also explain")
    assert cut is not None and cut.reason == "call" and cut.keep == 0


CONTEXT = (
    "### mathutils.py (lines 4-9) factorial, called by the test\n```python\n"
    "def factorial(n: int) -> int:\n    # n! = 1 * 2 * ... * n, and factorial(0) == 1\n"
    "    result = 1\n    for i in range(2, n + 1):\n        result += i\n    return result\n```"
)


def test_prose_that_re_types_the_context_is_an_echo_from_where_it_began() -> None:
    index = EchoIndex()
    index.add(CONTEXT)
    echo = "The code is:\n" + CONTEXT.split("\n", 1)[1].replace("\n", "\n ")  # re-indented: still an echo
    watch = ReplyWatch(TOOLS, on_prose=lambda text: None, on_calling=lambda tool, on: None, echo=index)
    cut = None
    for start in range(0, len(echo), 3):
        cut = watch.on_text(echo[start : start + 3])
        if cut is not None:
            break
    assert cut is not None and cut.reason == "echo"
    assert watch.text[: cut.keep].strip() == "The code is:"  # what came before the echo is kept
    assert echoed_chars(index, echo) > 100


def test_quoting_a_line_or_copying_old_text_into_a_call_is_no_echo() -> None:
    index = EchoIndex()
    index.add(CONTEXT)
    old = "    result = 1\n    for i in range(2, n + 1):\n        result += i\n    return result"
    arguments = {"path": "mathutils.py", "old_text": old, "new_text": old.replace("+=", "*=")}
    reply = (
        "The bug: `result += i` adds where it should multiply.\n```json\n"
        + json.dumps({"name": "edit_file", "arguments": arguments})
        + "\n```"
    )
    watch = ReplyWatch(TOOLS, on_prose=lambda text: None, on_calling=lambda tool, on: None, echo=index)
    cuts = [watch.on_text(reply[start : start + 4]) for start in range(0, len(reply), 4)]
    assert not any(cut is not None and cut.reason == "echo" for cut in cuts)
    assert echoed_chars(index, "The bug: `result += i` adds where it should multiply.") == 0


def test_a_numbered_listing_re_typed_with_or_without_its_line_numbers_is_an_echo() -> None:
    listing = "\n".join(f"{n:>4} | {line}" for n, line in enumerate(CONTEXT.splitlines()[2:-1], 4))
    index = EchoIndex()
    index.add("### mathutils.py (lines 4-9) factorial, called by the test\n" + listing)
    bare = "\n".join(line.split(" | ", 1)[1] for line in listing.splitlines())
    assert echoed_chars(index, "Here it is again:\n" + listing) > 100
    assert echoed_chars(index, "Here it is again:\n" + bare) > 100
