"""Find tool calls a model wrote into its text: ReAct Action lines, <tool_call> tags, bare or fenced JSON."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "REACT_STOP",
    "ParsedCall",
    "ParsedContent",
    "format_observation",
    "format_react_call",
    "parse_content",
]

REACT_STOP: tuple[str, ...] = ("\nObservation:",)
"""Stop sequences for the text protocol: generation ends before the model invents an observation."""


@dataclass(frozen=True)
class ParsedCall:
    """One tool call found in text; ``arguments`` is the raw text when it could not be read as JSON."""

    name: str
    arguments: dict[str, Any] | str


@dataclass(frozen=True)
class ParsedContent:
    """What a model's text content holds: its reasoning, the calls in order, and which form they took."""

    thought: str
    calls: tuple[ParsedCall, ...]
    style: str  # "react" | "tool_call_tag" | "json" | "none"
    final_answer: str | None = None


def format_react_call(name: str, arguments: dict[str, Any]) -> str:
    """The text-protocol form of a call, as the loop writes it back into the history."""
    return f"Action: {name}\nAction Input: {json.dumps(arguments, ensure_ascii=False)}"


def format_observation(text: str) -> str:
    """The user-message text that carries a tool result back in the text protocol."""
    return f"Observation: {text.rstrip()}"


# ---------------------------------------------------------------------------------------------
# Entry point

_Found = tuple[int, int, str, list[ParsedCall]]  # start, end, style, calls

_SPECIAL_TOKENS = re.compile(r"<\|(?:im_end|im_start|endoftext|eot_id|end)\|>")
_EMPTY_FENCE = re.compile(r"```[\w+.-]*[ \t]*\n?\s*```")
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
    single = dict(single_arg or {})
    t = _SPECIAL_TOKENS.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    t = _cut_hallucinated(t)

    found: list[_Found] = list(_tag_calls(t))
    masked = _mask(t, [(s, e) for s, e, _, _ in found])
    react = _react_calls(masked, known, single)
    found += react
    masked = _mask(masked, [(s, e) for s, e, _, _ in react])

    final_answer: str | None = None
    final_span: tuple[int, int] | None = None
    fm = _FINAL_RE.search(masked)
    if fm is not None:
        end = min([s for s, _, _, _ in found if s > fm.start()], default=len(t))
        final_answer = masked[fm.end() : end].strip()
        final_span = (fm.start(), end)
        masked = _mask(masked, [final_span])

    found += _json_calls(masked, t, known)
    found.sort(key=lambda f: f[0])

    calls: list[ParsedCall] = []
    for _, _, _, group in found:
        for call in group:
            if call.name.strip().lower() in _FINAL_NAMES and call.name not in known:
                if final_answer is None:
                    final_answer = _answer_text(call.arguments)
                continue
            calls.append(_with_single_arg(call, single))

    spans = [(s, e) for s, e, _, _ in found] + ([final_span] if final_span else [])
    if found:
        style = found[0][2]
    else:
        style = "react" if final_answer is not None else "none"
    return ParsedContent(
        thought=_clean_thought(_remove(t, spans)),
        calls=tuple(calls),
        style=style,
        final_answer=final_answer,
    )


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
    text = _THOUGHT_RE.sub("", text)
    text = _EMPTY_FENCE.sub("", text)
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
            return ParsedCall(call.name, {single[call.name]: _unquote(s)})
    return call


def _unquote(s: str) -> str:
    s = s.strip()
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "\"'`":
        try:
            value = _loads_loose(s) if s[0] != "`" else s[1:-1]
        except ValueError:
            return s[1:-1]
        if isinstance(value, str):
            return value
    return s


def _label(words: str) -> re.Pattern[str]:
    return re.compile(rf"^[ \t]*[*_#]*[ \t]*(?:{words})[*_]*[ \t]*:[*_]*[ \t]*", re.I | re.M)


_ACTION_RE = _label(r"Action(?:[ \t]*\d+)?")
_INPUT_RE = _label(r"Action[ _]?Input(?:[ \t]*\d+)?")
_THOUGHT_RE = _label(r"Thought(?:[ \t]*\d+)?")
_FINAL_RE = _label(r"Final[ _]?Answer")
_OBS_RE = _label(r"Observation(?:[ \t]*\d+)?")
_ANY_LABEL_RE = _label(r"Thought|Action[ _]?Input|Action|Final[ _]?Answer|Observation")
_TOOL_RESPONSE_RE = re.compile(r"<tool_response>", re.I)


def _cut_hallucinated(text: str) -> str:
    """Drop what follows an observation or tool response the model wrote itself."""
    for m in _OBS_RE.finditer(text):
        if text[: m.start()].strip():
            text = text[: m.start()]
            break
    m = _TOOL_RESPONSE_RE.search(text)
    if m is not None and _TAG_OPEN_RE.search(text, 0, m.start()):
        text = text[: m.start()]
    return text


# ---------------------------------------------------------------------------------------------
# Tolerant JSON


_CLOSERS = {"{": "}", "[": "]", "(": ")"}
_STRING_STARTS = frozenset("{[(,:=")


def _scan(text: str, start: int) -> tuple[int | None, str]:
    """Find the end of the bracketed value at ``start``, respecting strings.

    Returns ``(end, "")`` for a balanced value, else ``(None, closers)`` where ``closers``
    would complete a value cut off at the end of the text (empty when it cannot be completed).
    A quote opens a string only where a value or key may begin, so apostrophes and the
    unescaped quotes models put in code do not derail the count.
    """
    stack: list[str] = []
    quote = ""
    prev = ""
    parens = text[start] == "("  # JSON scans ignore parentheses: code outside a broken string has them
    i, n = start, len(text)
    while i < n:
        c = text[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == quote:
                quote = ""
                prev = c
            i += 1
            continue
        if c in "\"'" and (prev == "" or prev in _STRING_STARTS):
            quote = c
        elif c in _CLOSERS and (parens or c != "("):
            stack.append(_CLOSERS[c])
        elif c in ")]}" and (parens or c != ")"):
            if not stack or stack[-1] != c:
                return None, ""
            stack.pop()
            if not stack:
                return i + 1, ""
        if not c.isspace():
            prev = c
        i += 1
    if quote or not stack:
        return None, ""
    return None, "".join(reversed(stack))


def _closes_string(s: str, j: int) -> bool:
    """Whether a double quote just before ``j`` plausibly ends a JSON string."""
    n = len(s)
    while j < n and s[j] in " \t\n":
        j += 1
    if j >= n or s[j] in ":}]":
        return True
    if s[j] == ",":
        j += 1
        while j < n and s[j] in " \t\n":
            j += 1
        return j >= n or s[j] in "\"'}]{["
    return False


_HEX = frozenset("0123456789abcdefABCDEF")
_WORDS = {"True": "true", "False": "false", "None": "null"}


def _repair(s: str, guess_quotes: bool = False) -> str:
    """Rewrite near-JSON as JSON: raw control characters and bad escapes inside strings,
    single-quoted strings, trailing commas, Python's True/False/None; with ``guess_quotes``
    also escape double quotes that do not look like the end of a string."""
    out: list[str] = []
    quote = ""
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if quote:
            if c == "\\":
                nxt = s[i + 1] if i + 1 < n else ""
                if nxt == "'":
                    out.append("'")
                    i += 2
                elif nxt == "u" and len(s) >= i + 6 and all(h in _HEX for h in s[i + 2 : i + 6]):
                    out.append(s[i : i + 6])
                    i += 6
                elif nxt and nxt in '"\\/bfnrt':
                    out.append(c + nxt)
                    i += 2
                else:
                    out.append("\\\\")
                    i += 1
                continue
            if c == quote:
                if guess_quotes and quote == '"' and not _closes_string(s, i + 1):
                    out.append('\\"')
                else:
                    out.append('"')
                    quote = ""
            elif c == '"':
                out.append('\\"')
            elif c == "\n":
                out.append("\\n")
            elif c == "\r":
                out.append("\\r")
            elif c == "\t":
                out.append("\\t")
            elif ord(c) < 0x20:
                out.append(f"\\u{ord(c):04x}")
            else:
                out.append(c)
            i += 1
            continue
        if c in "\"'":
            quote = c
            out.append('"')
            i += 1
            continue
        if c == ",":
            j = i + 1
            while j < n and s[j].isspace():
                j += 1
            if j < n and s[j] in "}]":
                i += 1
                continue
        if c.isalpha() or c == "_":
            j = i
            while j < n and (s[j].isalnum() or s[j] == "_"):
                j += 1
            word = s[i:j]
            out.append(_WORDS.get(word, word))
            i = j
            continue
        out.append(c)
        i += 1
    return "".join(out)


class _JsonWords(ast.NodeTransformer):
    def visit_Name(self, node: ast.Name) -> ast.AST:
        value = {"true": True, "false": False, "null": None}.get(node.id, node)
        return node if value is node else ast.copy_location(ast.Constant(value), node)


def _literal(s: str) -> Any:
    """A Python literal (JSON's true/false/null allowed) as JSON values; sets and bytes are refused."""
    tree = ast.parse(s.strip(), mode="eval")
    return _as_json(ast.literal_eval(_JsonWords().visit(tree).body))


def _as_json(value: Any) -> Any:
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError) as exc:
        raise ValueError(str(exc)) from None


def _loads_loose(s: str) -> Any:
    """Parse JSON as models write it: strict JSON, then repaired JSON, then a Python literal."""
    s = s.strip()
    try:
        return json.loads(s, strict=False)
    except ValueError:
        pass
    try:
        return json.loads(_repair(s), strict=False)
    except ValueError:
        pass
    try:
        return _literal(s)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass
    try:
        return json.loads(_repair(s, guess_quotes=True), strict=False)
    except ValueError:
        raise ValueError("not JSON") from None


def _unfence(s: str) -> str:
    s = s.strip()
    if s.startswith("```"):
        nl = s.find("\n")
        s = s[nl + 1 :] if nl >= 0 else s[3:]
        s = s.rstrip()
        if s.endswith("```"):
            s = s[:-3]
    return s.strip()


# ---------------------------------------------------------------------------------------------
# Call shapes


_NAME_KEYS = ("name", "tool", "tool_name", "function", "action", "function_name", "tool_call")
_ARG_KEYS = (
    "arguments",
    "parameters",
    "args",
    "input",
    "action_input",
    "tool_input",
    "params",
    "kwargs",
    "argument",
)
_NAME_FALLBACK_RE = re.compile(
    r"""["']?(?:name|tool|tool_name|function|action|function_name)["']?\s*:\s*["']([^"'\n]+)["']"""
)
_ARGS_FALLBACK_RE = re.compile("[\"']?(?:" + "|".join(_ARG_KEYS) + ")[\"']?\\s*:\\s*")


def _shapes(obj: Any) -> list[tuple[str, Any]] | None:
    """The (name, raw arguments) calls a parsed JSON value describes, or None if it is not a call."""
    if isinstance(obj, list):
        if not obj:
            return None
        out: list[tuple[str, Any]] = []
        for item in obj:
            one = _shapes(item)
            if not one:
                return None
            out += one
        return out
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("tool_calls"), list):
        return _shapes(obj["tool_calls"])
    fn = obj.get("function")
    if isinstance(fn, dict):
        inner = _shapes(fn)
        if inner and len(inner) == 1:
            return inner
    for key in _NAME_KEYS:
        value = obj.get(key)
        if isinstance(value, str) and value.strip():
            name = value.strip()
            for arg_key in _ARG_KEYS:
                if arg_key in obj:
                    return [(name, obj[arg_key])]
            rest = {k: v for k, v in obj.items() if k not in (key, "type", "id")}
            return [(name, rest)]
    return None


def _arguments(raw: Any) -> dict[str, Any] | str:
    """Arguments as a dict, or as text when they are not a JSON object."""
    if raw is None:
        return {}
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        s = _unfence(raw)
        if not s:
            return {}
        if s[0] in "{[":
            try:
                parsed = _loads_loose(s)
            except ValueError:
                return raw
            if isinstance(parsed, dict):
                return parsed
        return raw
    return json.dumps(raw, ensure_ascii=False)


def _calls_from_json(chunk: str, known: frozenset[str] | None) -> list[ParsedCall] | None:
    """Calls in one JSON chunk; ``known`` (when given) is the set every name must belong to.

    JSON that cannot be parsed still yields a call with text arguments when a tool name can
    be read from it, so the loop can show the model the correct form.
    """
    try:
        obj = _loads_loose(chunk)
    except ValueError:
        m = _NAME_FALLBACK_RE.search(chunk)
        if m is None or (known is not None and m.group(1).strip() not in known):
            return None
        return [ParsedCall(m.group(1).strip(), _raw_arguments(chunk, m.end()))]
    shapes = _shapes(obj)
    if not shapes:
        return None
    if known is not None and not all(name in known for name, _ in shapes):
        return None
    return [ParsedCall(name, _arguments(raw)) for name, raw in shapes]


def _raw_arguments(chunk: str, after: int) -> str:
    m = _ARGS_FALLBACK_RE.search(chunk, after) or _ARGS_FALLBACK_RE.search(chunk)
    if m is None:
        return chunk.strip()
    start = m.end()
    if start < len(chunk) and chunk[start] in "{[":
        end, _ = _scan(chunk, start)
        if end is not None:
            return chunk[start:end]
    rest = chunk[start:].rstrip()
    while rest.endswith("}"):  # the enclosing call object's closing braces
        rest = rest[:-1].rstrip()
    return rest or chunk.strip()


# ---------------------------------------------------------------------------------------------
# <tool_call> tags

_TAG_OPEN_RE = re.compile(r"<tool_call>", re.I)
_TAG_CLOSE_RE = re.compile(r"</tool_call\s*>", re.I)
_LEADING_NAME_RE = re.compile(r"([A-Za-z_][\w.-]*)[ \t]*(?=[\n({\[])")


def _tag_calls(text: str) -> list[_Found]:
    out: list[_Found] = []
    pos = 0
    while (m := _TAG_OPEN_RE.search(text, pos)) is not None:
        close = _TAG_CLOSE_RE.search(text, m.end())
        nxt = _TAG_OPEN_RE.search(text, m.end())
        if close is not None and (nxt is None or close.start() < nxt.start()):
            inner, end = text[m.end() : close.start()], close.end()
        else:
            stop = nxt.start() if nxt is not None else len(text)
            inner, end = text[m.end() : stop], stop
        pos = end
        calls = _tag_inner_calls(_unfence(inner))
        if calls is not None:
            out.append((m.start(), end, "tool_call_tag", calls))
    return out


def _tag_inner_calls(inner: str) -> list[ParsedCall] | None:
    if not inner.strip():
        return None
    lead = _LEADING_NAME_RE.match(inner)
    if lead is not None and lead.group(1).lower() != "json":
        rest = inner[lead.end() :].strip()
        if rest.startswith(("(", "[")):
            end, _ = _scan(rest, 0)
            return [ParsedCall(lead.group(1), _loose_call_args(rest[1 : (end or len(rest)) - 1], rest[0]))]
        return [ParsedCall(lead.group(1), _arguments(rest))]
    if _NAME_RE.fullmatch(inner.strip()):
        return [ParsedCall(inner.strip(), {})]
    start = min((i for i in (inner.find("{"), inner.find("[")) if i >= 0), default=-1)
    if start < 0:
        return [ParsedCall("", inner.strip())]
    end, closers = _scan(inner, start)
    chunk = inner[start:end] if end is not None else inner[start:].rstrip() + closers
    calls = _calls_from_json(chunk, None)
    if calls is None and end is None:
        calls = _calls_from_json(inner[start:], None)
    return calls if calls is not None else [ParsedCall("", inner.strip())]


# ---------------------------------------------------------------------------------------------
# ReAct text protocol

_NAME_RE = re.compile(r"[A-Za-z_][\w.-]*")
_EMPTY_INPUTS = frozenset({"", "none", "null", "n/a", "nothing", "empty", "{}"})
_NO_ACTION = frozenset({"none", "n/a", "na", "nothing", "no action", "null"})


def _react_calls(text: str, known: frozenset[str], single: Mapping[str, str]) -> list[_Found]:
    out: list[_Found] = []
    pos = 0
    while (m := _ACTION_RE.search(text, pos)) is not None:
        found = _one_action(text, m.start(), m.end(), known)
        if found is None:
            pos = m.end()
            continue
        out.append(found)
        pos = max(found[1], m.end())
    return out


def _line_end(text: str, pos: int) -> int:
    nl = text.find("\n", pos)
    return len(text) if nl < 0 else nl


def _one_action(text: str, start: int, body: int, known: frozenset[str]) -> _Found | None:
    line_end = _line_end(text, body)
    rest = text[body:line_end]
    lead = len(rest) - len(rest.lstrip(" \t`'\"*"))
    p = body + lead
    stripped = text[p:line_end].strip()

    if not stripped:  # "Action:" then the name or a JSON action on the following lines
        q = p
        while q < len(text) and text[q].isspace():
            q += 1
        if q >= len(text) or _ANY_LABEL_RE.match(text, text.rfind("\n", 0, q) + 1):
            return None
        if text.startswith(("{", "[", "```"), q):
            return _json_action(text, start, q)
        nxt_end = _line_end(text, q)
        name_line = text[q:nxt_end].strip().strip("`'\"*").rstrip(".,;:").strip()
        if not _NAME_RE.fullmatch(name_line):
            return None
        return _named_action(text, start, name_line, nxt_end, known, explicit=True)

    if text.startswith(("{", "[", "```"), p):
        return _json_action(text, start, p)

    nm = _NAME_RE.match(text, p)
    if nm is not None:
        after = nm.end()
        while after < line_end and text[after] in " \t":
            after += 1
        bracket = text[after] if after < line_end else ""
        if bracket in "([" and bracket:
            end, _ = _scan(text, after)
            if end is None:
                close = text.rfind(")" if bracket == "(" else "]", after, line_end)
                end = close + 1 if close > after else line_end
            inner = text[after + 1 : end - 1] if text[end - 1] in ")]" else text[after + 1 : end]
            end = _skip_decoration(text, end)
            return (start, end, "react", [ParsedCall(nm.group(0), _loose_call_args(inner, bracket))])
        if text.startswith(("{", ":", ","), after):
            q = after + 1 if text[after] in ":," else after
            while q < line_end and text[q] in " \t":
                q += 1
            if text.startswith("{", q):
                kind, value, end = _read_value(text, q)
                return (start, end, "react", [ParsedCall(nm.group(0), _value_args(kind, value))])

    name = stripped.strip("`'\"*").rstrip(".,;:").strip("`'\"* ")
    explicit = True
    if not _NAME_RE.fullmatch(name):
        first = name.split()[0].strip("`'\"*.,;:") if name.split() else ""
        if first in known:
            name = first
        else:
            explicit = False
    return _named_action(text, start, name, line_end, known, explicit=explicit)


def _skip_decoration(text: str, end: int) -> int:
    line_end = _line_end(text, end)
    return line_end if not text[end:line_end].strip(" \t`'\"*.") else end


def _named_action(
    text: str, start: int, name: str, line_end: int, known: frozenset[str], explicit: bool
) -> _Found | None:
    im = _INPUT_RE.search(text, line_end)
    if im is not None and not text[line_end : im.start()].strip():
        kind, value, end = _read_value(text, im.end())
        return (start, end, "react", [ParsedCall(name, _value_args(kind, value))])
    if not explicit or (name.lower() in _NO_ACTION and name not in known):
        return None
    return (start, line_end, "react", [ParsedCall(name, {})])


def _json_action(text: str, start: int, q: int) -> _Found | None:
    kind, value, end = _read_value(text, q)
    if kind == "parsed":
        shapes = _shapes(value)
        if shapes:
            return (start, end, "react", [ParsedCall(n, _arguments(raw)) for n, raw in shapes])
        return None
    calls = _calls_from_json(value, None) if kind == "broken" else None
    return (start, end, "react", calls) if calls else None


def _read_value(text: str, p: int) -> tuple[str, Any, int]:
    """Read an Action Input starting at ``p``: ``("parsed", value, end)`` for JSON (plain,
    across lines or fenced), ``("broken", raw, end)`` for JSON that cannot be read, or
    ``("bare", raw, end)`` for plain text running to the next label."""
    q = p
    while q < len(text) and text[q] in " \t":
        q += 1
    if q < len(text) and text[q] == "\n":  # value on the following lines
        r = q
        while r < len(text) and text[r].isspace():
            r += 1
        if text.startswith(("{", "[", "```"), r):
            q = r
    if text.startswith("```", q):
        body_start = _line_end(text, q) + 1
        close = text.find("```", body_start)
        body_end = close if close >= 0 else len(text)
        end = min(len(text), close + 3) if close >= 0 else len(text)
        body = text[body_start:body_end] if body_start <= body_end else ""
        return _json_value(body, end)
    if q < len(text) and text[q] in "{[":
        end, closers = _scan(text, q)
        if end is not None:
            return _json_value(text[q:end], end)
        stop = _section_end(text, q)
        chunk = text[q:stop].rstrip()
        if closers:
            kind, value, _ = _json_value(chunk + closers, stop)
            if kind == "parsed":
                return kind, value, stop
        return "broken", chunk, stop
    stop = _section_end(text, q)
    raw = text[q:stop].strip()
    if raw[:1] in "\"'" and raw[-1:] == raw[:1] and len(raw) >= 2:
        return "bare", _unquote(raw), stop
    return "bare", raw, stop


def _json_value(chunk: str, end: int) -> tuple[str, Any, int]:
    try:
        return "parsed", _loads_loose(chunk), end
    except ValueError:
        return "broken", chunk.strip(), end


def _section_end(text: str, pos: int) -> int:
    m = _ANY_LABEL_RE.search(text, pos)
    return m.start() if m is not None else len(text)


def _value_args(kind: str, value: Any) -> dict[str, Any] | str:
    if kind == "parsed":
        if isinstance(value, dict):
            return value
        if isinstance(value, str):
            return value if value.strip() else {}
        return json.dumps(value, ensure_ascii=False)
    if kind == "bare":
        text = str(value).strip()
        return {} if text.lower() in _EMPTY_INPUTS else text
    return str(value)


def _loose_call_args(inner: str, bracket: str) -> dict[str, Any] | str:
    """Arguments of ``tool[value]`` or ``tool(key="value", ...)``."""
    s = inner.strip()
    if not s:
        return {}
    if s[0] in "{[":
        try:
            value = _loads_loose(s)
        except ValueError:
            return s
        return value if isinstance(value, dict) else s
    if bracket == "(":
        try:
            call = ast.parse(f"_f({s})", mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            call = None
        if isinstance(call, ast.Call) and not call.args and call.keywords:
            try:
                words = _JsonWords()
                args = {kw.arg: _as_json(ast.literal_eval(words.visit(kw.value))) for kw in call.keywords}
            except (ValueError, TypeError, SyntaxError, RecursionError):
                return s
            if all(k is not None for k in args):
                return {str(k): v for k, v in args.items()}
            return s
    return _unquote(s)


# ---------------------------------------------------------------------------------------------
# Bare or fenced JSON


_OPEN_FENCE_BEFORE = re.compile(r"```[\w+.-]*[ \t]*\n[ \t]*\Z")
_CLOSE_FENCE_AFTER = re.compile(r"[ \t]*\n?[ \t]*```[ \t]*")
_JSON_START = re.compile(r"""\{(?=\s*["'}])|\[(?=\s*\{)""")  # where a call object or list can begin
_SCAN_BUDGET = 2_000_000  # characters scanned in all, so pathological text cannot stall the loop


def _json_calls(masked: str, text: str, known: frozenset[str]) -> list[_Found]:
    """Bare or fenced JSON objects (or lists of them) that name a known tool."""
    out: list[_Found] = []
    if not any(f'"{name}"' in masked or f"'{name}'" in masked for name in known):
        return out
    budget = _SCAN_BUDGET
    pos = 0
    while budget > 0 and (m := _JSON_START.search(masked, pos)) is not None:
        s = m.start()
        end, closers = _scan(masked, s)
        budget -= (end or len(masked)) - s
        calls: list[ParsedCall] | None = None
        if end is not None:
            chunk = masked[s:end]
            if _names_known(chunk, known):
                calls = _calls_from_json(chunk, known)
        elif closers:  # cut off at the end of the text: complete it, but only if it then parses
            tail = masked[s:].rstrip()
            tail = tail[:-3].rstrip() if tail.endswith("```") else tail
            chunk = tail + closers
            if _names_known(chunk, known):
                try:
                    shapes = _shapes(_loads_loose(chunk))
                except ValueError:
                    shapes = None
                if shapes and all(name in known for name, _ in shapes):
                    calls, end = [ParsedCall(n, _arguments(raw)) for n, raw in shapes], len(masked)
        if end is None:
            pos = s + 1
            continue
        if not calls:
            pos = _next_scan_pos(masked[s:end], s, end)
            continue
        fs, fe = s, end
        before = _OPEN_FENCE_BEFORE.search(text, 0, s)
        after = _CLOSE_FENCE_AFTER.match(text, end)
        if before is not None and (after is not None or not text[end:].strip()):
            fs, fe = before.start(), (after.end() if after is not None else end)
        out.append((fs, fe, "json", calls))
        pos = end
    return out


def _names_known(chunk: str, known: frozenset[str]) -> bool:
    return any(name in chunk for name in known)


def _next_scan_pos(chunk: str, s: int, end: int) -> int:
    """After a JSON value that is not a call: skip it whole if it parsed, else look inside."""
    try:
        _loads_loose(chunk)
    except ValueError:
        return s + 1
    return end
