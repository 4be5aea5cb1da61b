"""Calls in a reply as it streams: when a call is complete, when the model has moved on, the prose before.

`CallScanner.feed` takes each piece of text as it arrives. A call is complete once its form has closed
(a fenced or bare JSON object, a `<tool_call>` block's JSON, a ReAct `Action:` line with its input) and
`parse_content` reads a call from it. After a complete call only more calls may follow (the closing fence
or tag, whitespace, the next call): anything else means the model has moved on, and `stop_at` says where
the useful text ends, so the stream can be closed there. Text before the first call that is not part of
one is prose; `prose_end` says how much of it is settled (never a piece of a call).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from fixloop.agent.text_calls.loose_json import JsonScan
from fixloop.agent.text_calls.react import ACTION_LABEL, INPUT_LABEL, LABEL_LEAD
from fixloop.agent.text_calls.reader import parse_content
from fixloop.agent.text_calls.shapes import CALL_START, NAME_KEY, ParsedCall
from fixloop.tools.fences import CLOSING, FENCE, OPENING

_OPENER = re.compile(FENCE + r"|<tool_call>|\{|\[|^" + LABEL_LEAD + r"Action\b", re.I | re.M)
_JSON_FENCES = ("", "json", "jsonc", "json5", "tool_call", "tool_code", "javascript", "js")
_TAG = "<tool_call>"
_TAG_CLOSE = re.compile(r"</tool_call\s*>", re.I)
_NAME = re.compile(NAME_KEY + r"""["']([\w.-]+)["']""")
_REACT_NAME = re.compile(r"`?([\w.-]+)`?[ \t]*[\n({]")
_UNDECIDED = "undecided"


@dataclass(frozen=True)
class Span:
    """Complete calls in the text: where they start and end, and what they say."""

    start: int
    end: int
    calls: tuple[ParsedCall, ...]


@dataclass(frozen=True)
class _Form:
    kind: str  # json | tag | react
    at: int  # where the JSON object, the tag or the label begins
    start: int  # where the call's text begins (an opening fence included)


class CallScanner:
    """Finds complete calls in a growing text and tells when the text after them is no longer a call."""

    def __init__(self, tool_names: Collection[str], single_arg: Mapping[str, str] | None = None) -> None:
        self.known = frozenset(tool_names)
        self.single_arg = dict(single_arg or {})
        self.text = ""
        self.spans: list[Span] = []
        self.stop_at: int | None = None  # set once the model has moved on after its calls
        self.open_start: int | None = None  # where the call being written begins, if one is
        self._settled = 0  # text before this is prose or complete calls
        self._hold = 0  # prose before this is settled (never part of a call)
        self._keep = 0  # after the calls: through the fences and tags that close them
        self._scans: dict[int, JsonScan] = {}  # JSON values being read, by where they open

    @property
    def complete(self) -> int:
        """How many calls have been read completely."""
        return sum(len(span.calls) for span in self.spans)

    @property
    def keep(self) -> int:
        """The length of the useful text: everything before the model moved on."""
        return self.stop_at if self.stop_at is not None else len(self.text)

    def feed(self, delta: str) -> bool:
        """Add a piece of text; True once the model has moved on after one or more complete calls."""
        if self.stop_at is None and delta:
            self.text += delta
            if self.open_start is None or any(c in delta for c in "}]>\n"):  # else nothing can close
                self._advance()
        return self.stop_at is not None

    def prose_end(self) -> int:
        """The text before this offset and before the first call is prose (safe to show as a thought)."""
        return self.spans[0].start if self.spans else self._hold

    def calls(self) -> list[ParsedCall]:
        return [call for span in self.spans for call in span.calls]

    def open_call(self) -> tuple[str, str] | None:
        """(tool, text so far) of the call being written, once its tool name is complete."""
        if self.open_start is None:
            return None
        chunk = self.text[self.open_start : self.open_start + 2000]  # a call names its tool early, if at all
        label = ACTION_LABEL.match(chunk)
        if label is not None:
            word = _REACT_NAME.match(chunk, label.end())
            if word is not None and word.group(1) in self.known:
                return word.group(1), chunk
        m = _NAME.search(chunk)
        if m is not None and m.group(1) in self.known:
            return m.group(1), chunk
        return None

    # ---- analysis ------------------------------------------------------------------------------

    def _advance(self) -> None:
        while self.stop_at is None and (self._after_call() if self.spans else self._in_prose()):
            pass

    def _in_prose(self) -> bool:
        """Look for the first call; True when there is more to look at now."""
        text = self.text
        m = _OPENER.search(text, self._settled)
        if m is None:
            self._settled = self._hold = _partial_start(text, self._settled)
            return False
        p = m.start()
        form = self._classify(p)
        if form == _UNDECIDED:
            self._settled = self._hold = p
            return False
        if form is None:
            self._settled = self._hold = m.end()
            return True
        assert isinstance(form, _Form)
        taken = self._take(form)
        if taken is None:
            self._settled = self._hold = form.start
            return False
        if taken is not True:
            self._settled = self._hold = taken  # a closed form that is no call: prose
        return True

    def _after_call(self) -> bool:
        """After complete calls: closers, whitespace, more calls; anything else sets `stop_at`."""
        text = self.text
        k = self._settled
        while True:
            while k < len(text) and text[k].isspace():
                k += 1
            if k >= len(text):
                return False
            rest = text[k : k + len(_TAG) + 1]
            close = _TAG_CLOSE.match(text, k)
            if close is not None:
                k = self._keep = close.end()
                continue
            if "</tool_call>".startswith(rest.lower()):
                return False
            form = self._classify(k)
            if form == _UNDECIDED:
                return False
            fence = CLOSING.match(text, k)
            if form is None and fence is not None:
                k = self._keep = k + len(FENCE)  # the fence closing the call
                self._settled = k
                continue
            if form is None:
                self.stop_at = self._keep
                return False
            assert isinstance(form, _Form)
            taken = self._take(form)
            if taken is True:
                return True
            if taken is not None:
                self.stop_at = self._keep
            return False

    def _take(self, form: _Form) -> bool | int | None:
        """A form read: True when it is a complete call (added), None while it is still open (its start kept
        in `open_start`), else the end of a closed form that is no call."""
        outcome = self._candidate(form)
        self.open_start = form.start if outcome is None else None
        if isinstance(outcome, Span):
            self._add(outcome)
            return True
        return outcome

    def _add(self, span: Span) -> None:
        self.spans.append(span)
        self._settled = self._keep = span.end

    def _classify(self, p: int) -> _Form | str | None:
        """What begins at `p`: a call's form, `_UNDECIDED` (too little text yet) or None (no call)."""
        text = self.text
        rest = text[p : p + 16]
        if len(rest) < len(FENCE) and FENCE.startswith(rest):
            return _UNDECIDED
        if rest.startswith(FENCE):
            return self._fence_form(p)
        if rest[:1] in ("{", "["):
            return self._json_form(p, p)
        if rest[:1] == "<":
            if text[p : p + len(_TAG)].lower() == _TAG:
                return _Form("tag", p, p)
            return _UNDECIDED if _TAG.startswith(text[p:].lower()) else None
        if ACTION_LABEL.match(text, p) is not None:
            return _Form("react", p, p)
        word = text[p:].strip(" \t*_#").lower()
        if "\n" not in word and ("action:".startswith(word) or re.fullmatch(r"action[ \t]*\d*[ \t]*", word)):
            return _UNDECIDED
        return None

    def _fence_form(self, p: int) -> _Form | str | None:
        """A fence opening at `p`: a call when its language is JSON's (or none) and an object follows."""
        text = self.text
        line = OPENING.match(text, p)
        if line is None:
            lang = text[p + len(FENCE) :].strip(" \t").lower()
            if "\n" in lang or not any(fence.startswith(lang) for fence in _JSON_FENCES):
                return None
            return _UNDECIDED
        if line.group(1).lower() not in _JSON_FENCES:
            return None
        q = line.end()
        while q < len(text) and text[q].isspace():
            q += 1
        if q >= len(text):
            return _UNDECIDED
        if text[q] == "<":
            if text[q : q + len(_TAG)].lower() == _TAG:
                return _Form("tag", q, p)
            return _UNDECIDED if _TAG.startswith(text[q:].lower()) else None
        return self._json_form(q, p)

    def _json_form(self, q: int, start: int) -> _Form | str | None:
        if CALL_START.match(self.text, q) is not None:
            return _Form("json", q, start)
        after = re.sub(r"\s", "", self.text[q : q + 40])
        return _UNDECIDED if after in ("{", "[", "[{") else None

    def _candidate(self, form: _Form) -> Span | int | None:
        """Complete calls (a Span), the end of a closed form that is no call (int), or None while open."""
        text = self.text
        if form.kind == "json":
            end = self._closed_at(form.at)
            if end is None:
                return None
            return self._read(form.start, end) if end >= 0 else form.at + 1
        if form.kind == "tag":
            inner = form.at + len(_TAG)
            close = _TAG_CLOSE.search(text, inner)
            bracket = _first_bracket(text, inner, close.start() if close else len(text))
            if bracket is not None:
                end = self._closed_at(bracket)
                if end is not None and end >= 0:
                    return self._read(form.start, end)
            if close is not None:
                return self._read(form.start, close.end())
            return None
        return self._react(form.start)

    def _react(self, p: int) -> Span | int | None:
        text = self.text
        label = ACTION_LABEL.match(text, p)
        assert label is not None
        body = label.end()
        line_end = text.find("\n", body)
        first = text[body : line_end if line_end >= 0 else len(text)].strip()
        if first[:1] in ("{", "["):
            end = self._closed_at(text.index(first[0], body))
            if end is None:
                return None
            return self._read(p, end) if end >= 0 else body
        if line_end < 0:
            return None
        if "(" in first:
            return self._read(p, line_end)
        nxt = line_end + 1
        while nxt < len(text) and text[nxt] in " \t\n":
            nxt += 1
        if nxt >= len(text):
            return None
        label_input = INPUT_LABEL.match(text, text.rfind("\n", 0, nxt) + 1)
        if label_input is None:
            written = text[nxt:].strip(" \t*_#").lower()
            if "\n" not in written and "action input:".startswith(written[:13]):
                return None
            return self._read(p, line_end)
        value = label_input.end()
        if value >= len(text):
            return None
        if text[value] in "{[":
            end = self._closed_at(value)
            if end is None:
                return None
            return self._read(p, end) if end >= 0 else value + 1
        value_end = text.find("\n", value)
        return None if value_end < 0 else self._read(p, value_end)

    def _closed_at(self, at: int) -> int | None:
        """Where the JSON value opening at `at` ends (see `JsonScan`), resumed where the last look stopped."""
        scan = self._scans.get(at)
        if scan is None:
            if len(self._scans) > 8:
                self._scans.clear()
            scan = self._scans[at] = JsonScan(at)
        return scan.advance(self.text)

    def _read(self, start: int, end: int) -> Span | int:
        parsed = parse_content(self.text[start:end], self.known, single_arg=self.single_arg)
        if not parsed.calls:
            return end
        return Span(start, end, tuple(parsed.calls))


def _partial_start(text: str, i: int) -> int:
    """Where a call opener may be beginning at the very end of the text (else the text's length)."""
    for k in range(max(i, len(text) - len(_TAG)), len(text)):
        piece = text[k:].lower()
        if any(opener.startswith(piece) for opener in (FENCE, _TAG)):
            return k
    line_start = text.rfind("\n", 0, len(text)) + 1
    if line_start >= i:
        word = text[line_start:].strip(" \t*_#").lower()
        if word and "action:".startswith(word):
            return line_start
    return len(text)


def _first_bracket(text: str, start: int, end: int) -> int | None:
    for k in range(start, end):
        if text[k] in "{[":
            return k
    return None
