"""parse_content: every tool call in a model's text, in order, with the thought around them."""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from fixloop.agent.text_calls.embedded import TAG_OPEN_RE, json_calls, tag_calls
from fixloop.agent.text_calls.loose_json import unquote
from fixloop.agent.text_calls.react import FINAL_RE, OBSERVATION_RE, THOUGHT_RE, react_calls
from fixloop.agent.text_calls.shapes import Found, ParsedCall
from fixloop.tools.fences import EMPTY_BLOCK


@dataclass(frozen=True)
class ParsedContent:
    """What a model's text content holds: its reasoning, the calls in order, and which form they took."""

    thought: str
    calls: tuple[ParsedCall, ...]
    style: str  # "react" | "tool_call_tag" | "json" | "none"
    final_answer: str | None = None


# ---------------------------------------------------------------------------------------------
# Entry point


_SPECIAL_TOKENS = re.compile(r"<\|(?:im_end|im_start|endoftext|eot_id|end)\|>")
_FINAL_NAMES = frozenset({"final answer", "final_answer", "finalanswer"})


def parse_content(
    text: str,
    tool_names: Collection[str],
    single_arg: Mapping[str, str] | None = None,
) -> ParsedContent:
    """Find every tool call in ``text`` (ReAct, ``<tool_call>`` tags, bare or fenced JSON), in order.

    ``tool_names`` are the tools the model was offered: a bare JSON object counts as a call only
    when it names one of them, while explicit forms (Action lines, tags) are returned whatever the
    name, so the loop can answer "unknown tool". ``single_arg`` maps a tool to its one required
    argument, so that ``Action Input: src/app.py`` becomes ``{"path": "src/app.py"}``.
    Anything the model wrote after a call as if it were the tool's result ("Observation:",
    ``<tool_response>``) is dropped. ``thought`` is the rest of the text without the call blocks,
    the final answer and the "Thought:" labels.
    """
    known = frozenset(tool_names)
    t = _cut_hallucinated(_SPECIAL_TOKENS.sub("", text.replace("\r\n", "\n").replace("\r", "\n")))
    found, final_span, final_answer = _find_calls(t, known)
    calls, named_answer = _read_calls(found, known, dict(single_arg or {}))
    final_answer = final_answer if final_answer is not None else named_answer
    spans = [(s, e) for s, e, _, _ in found] + ([final_span] if final_span else [])
    style = found[0][2] if found else ("react" if final_answer is not None else "none")
    return ParsedContent(
        thought=_clean_thought(_remove(t, spans)),
        calls=tuple(calls),
        style=style,
        final_answer=final_answer,
    )


def _find_calls(t: str, known: frozenset[str]) -> tuple[list[Found], tuple[int, int] | None, str | None]:
    """The calls in `t` in order (tags, then ReAct, then JSON in what is left), and a final answer
    written as a label: its span and text."""
    found: list[Found] = list(tag_calls(t))
    masked = _mask(t, [(s, e) for s, e, _, _ in found])
    react = react_calls(masked, known)
    found += react
    masked = _mask(masked, [(s, e) for s, e, _, _ in react])
    final_span: tuple[int, int] | None = None
    final_answer: str | None = None
    fm = FINAL_RE.search(masked)
    if fm is not None:
        end = min([s for s, _, _, _ in found if s > fm.start()], default=len(t))
        final_answer, final_span = masked[fm.end() : end].strip(), (fm.start(), end)
        masked = _mask(masked, [final_span])
    found += json_calls(masked, t, known)
    found.sort(key=lambda f: f[0])
    return found, final_span, final_answer


def _read_calls(
    found: list[Found], known: frozenset[str], single: Mapping[str, str]
) -> tuple[list[ParsedCall], str | None]:
    """The calls found, one-argument strings mapped; the first call of a "final answer" tool is the
    answer's text instead."""
    calls: list[ParsedCall] = []
    answer: str | None = None
    for _, _, _, group in found:
        for call in group:
            if call.name.strip().lower() in _FINAL_NAMES and call.name not in known:
                answer = _answer_text(call.arguments) if answer is None else answer
                continue
            calls.append(_with_single_arg(call, single))
    return calls, answer


# ---------------------------------------------------------------------------------------------
# Text helpers


def _mask(text: str, spans: list[tuple[int, int]]) -> str:
    """Blank out spans (keeping newlines and length) so later scans neither see nor shift them."""
    if not spans:
        return text
    chars = list(text)
    for s, e in spans:
        for i in range(s, e):
            if chars[i] != "\n":
                chars[i] = " "
    return "".join(chars)


def _remove(text: str, spans: list[tuple[int, int]]) -> str:
    out, pos = [], 0
    for s, e in sorted(spans):
        if s < pos:
            s = pos
        out.append(text[pos:s])
        pos = max(pos, e)
    out.append(text[pos:])
    return "".join(out)


def _clean_thought(text: str) -> str:
    text = THOUGHT_RE.sub("", text)
    text = EMPTY_BLOCK.sub("", text)
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def _answer_text(arguments: dict[str, Any] | str) -> str:
    if isinstance(arguments, str):
        return arguments.strip()
    if len(arguments) == 1:
        (value,) = arguments.values()
        if isinstance(value, str):
            return value.strip()
    return json.dumps(arguments, ensure_ascii=False)


def _with_single_arg(call: ParsedCall, single: Mapping[str, str]) -> ParsedCall:
    """Map a plain-string argument onto the tool's single required argument, when known."""
    args = call.arguments
    if isinstance(args, str):
        s = args.strip()
        if s and s[0] not in "{[" and call.name in single:
            return ParsedCall(call.name, {single[call.name]: unquote(s)})
    return call


_TOOL_RESPONSE_RE = re.compile(r"<tool_response>", re.I)


def _cut_hallucinated(text: str) -> str:
    """Drop what follows an observation or tool response the model wrote itself."""
    for m in OBSERVATION_RE.finditer(text):
        if text[: m.start()].strip():
            text = text[: m.start()]
            break
    m = _TOOL_RESPONSE_RE.search(text)
    if m is not None and TAG_OPEN_RE.search(text, 0, m.start()):
        text = text[: m.start()]
    return text
