"""One-token changes of a line (mutants.py): the operators of a classic one-token bug, each change valid
Python, the rest of the file byte for byte; and the suspect lines they are tried on, best first
(mutant_round.py)."""

from __future__ import annotations

import ast
import asyncio
import time

import pytest

from fixloop.agent.candidates import BaseFiles
from fixloop.agent.localize import Suspect
from fixloop.agent.mutant_round import MutantRound, Spot, suspect_spots, traceback_spots
from fixloop.agent.mutants import mutants
from fixloop.pytest_runner.results import Frame, TestOutcome

CODE = """\
def window(xs, n, flag):
    if n < len(xs) and not xs[n]:
        return max(xs[:n], key=abs)
    total = 0
    for i in range(n):
        total += clamp(xs[i], 0)
    return total if flag else -total
"""


def changes(line: int, text: str = CODE) -> dict[str, str]:
    """what each change of `line` says -> the changed line"""
    return {m.said.split(": ", 1)[1]: m.text.splitlines()[line - 1] for m in mutants(text, line)}


@pytest.mark.parametrize(
    ("line", "said", "changed"),
    [
        (2, "`<` → `<=`", "    if n <= len(xs) and not xs[n]:"),
        (2, "`<` → `>=`", "    if n >= len(xs) and not xs[n]:"),  # the comparison negated
        (2, "`and` → `or`", "    if n < len(xs) or not xs[n]:"),
        (2, "`not` removed", "    if n < len(xs) and xs[n]:"),
        (2, "`len(xs)` → `len(xs) - 1`", "    if n < len(xs) - 1 and not xs[n]:"),
        (2, "`n` → `n + 1`", "    if n < len(xs) and not xs[n + 1]:"),
        (2, "`n < len(xs) and not xs[n]` → `not (n < len(xs) and not xs[n])`",
         "    if not (n < len(xs) and not xs[n]):"),
        (3, "`max` → `min`", "        return min(xs[:n], key=abs)"),
        (5, "`n` → `n + 1`", "    for i in range(n + 1):"),
        (4, "`0` → `1`", "    total = 1"),
        (6, "`+=` → `*=`", "        total *= clamp(xs[i], 0)"),
        (6, "`xs[i], 0` → `0, xs[i]`", "        total += clamp(0, xs[i])"),
        (7, "`flag` → `not flag`", "    return total if not flag else -total"),
    ],
)  # fmt: skip
def test_a_classic_one_token_bug_has_its_change(line: int, said: str, changed: str) -> None:
    assert changes(line)[said] == changed


def test_every_change_is_valid_python_and_touches_its_line_only() -> None:
    lines = CODE.splitlines(keepends=True)
    for number in range(1, len(lines) + 1):
        for mutant in mutants(CODE, number):
            ast.parse(mutant.text)
            after = mutant.text.splitlines(keepends=True)
            assert after[: number - 1] == lines[: number - 1]
            assert after[number:] == lines[number:]
            assert after[number - 1] != lines[number - 1]


def test_changes_that_would_not_parse_are_left_out() -> None:
    said = changes(5)  # `for i in range(n)`: `in` -> `not in` is no Python
    assert not any("not in" in key for key in said)
    assert "`is` → `is not`" in changes(1, "x = a is None\n")
    assert changes(1, "x = a is not None\n") == {"`not` removed": "x = a is None"}


def test_a_blank_or_missing_line_has_no_changes_and_crlf_is_kept() -> None:
    assert mutants(CODE, 0) == [] and mutants(CODE, 99) == []
    assert mutants("x = 1\n\ny = 2\n", 2) == []
    crlf = "def f(a):\r\n    return a < 2\r\n"
    changed = next(m for m in mutants(crlf, 2) if "`<=`" in m.said)
    assert changed.text == "def f(a):\r\n    return a <= 2\r\n"


def test_non_ascii_text_before_a_node_keeps_the_offsets_right() -> None:
    text = 'def f(é):\n    return g("ü", é[1:n])\n'
    said = changes(2, text)
    assert said["`n` → `n - 1`"] == '    return g("ü", é[1:n - 1])'
    assert said['`"ü", é[1:n]` → `é[1:n], "ü"`'] == '    return g(é[1:n], "ü")'


def suspect(path: str, name: str, lines: tuple[tuple[int, float], ...]) -> Suspect:
    return Suspect(path, name, 1, 10, 1.0, 1, 0, lines)


def test_suspect_lines_go_by_their_own_score_across_suspects() -> None:
    suspects = [
        suspect("a.py", "f", ((3, 0.5), (4, 0.5))),
        suspect("b.py", "g", ((7, 1.0), (8, 0.4))),
        suspect("c.py", "h", ((2, 0.3),)),
        suspect("c.py", "k", ((9, 0.45),)),  # the fourth suspect's lines are tried too
    ]
    spots = suspect_spots(suspects, [], lambda path: None)
    assert spots == [
        Spot("b.py", 7),
        Spot("a.py", 3),
        Spot("a.py", 4),
        Spot("c.py", 9),
        Spot("b.py", 8),
        Spot("c.py", 2),
    ]


def test_without_coverage_the_innermost_code_frame_and_its_function_come_first() -> None:
    code = "def outer(x):\n    return inner(x)\n\n\ndef inner(x):\n"
    code += "    y = x + 1\n    z = y * 2\n    return z[0]\n"
    frames = (
        Frame("tests/test_a.py", 3, "test_a"),
        Frame("a.py", 2, "outer"),
        Frame("a.py", 8, "inner"),
    )
    failure = TestOutcome("tests/test_a.py::test_a", "failed", frames=frames)
    spots = traceback_spots([failure], {"a.py": code}.get)
    assert spots[:4] == [Spot("a.py", 8), Spot("a.py", 7), Spot("a.py", 6), Spot("a.py", 2)]
    assert all(not spot.path.startswith("tests/") for spot in spots)


LOOP = """\
def total_below(xs, n):
    total = 0
    for x in xs:
        if x > n:
            break
        total = total + x
    return total
"""


def test_the_wide_changes_read_another_variable_or_leave_the_line_out() -> None:
    said = {m.said.split(": ", 1)[1]: m.text.splitlines()[m.line - 1] for m in mutants(LOOP, 6, wide=True)}
    assert said["`x` → `n`"] == "        total = total + n"
    assert said["`total = total + x` left out"] == "        pass"
    guard = next(m for m in mutants(LOOP, 4, wide=True) if m.said.endswith("left out"))
    assert guard.said == "line 4: `if x > n:` left out"
    assert guard.text == LOOP.replace("        if x > n:\n            break\n", "        pass\n")
    assert mutants(LOOP, 5, wide=True)[-1].text == LOOP.replace("break", "pass")
    assert not any("`" + "total` →" in m.said for m in mutants(LOOP, 2, wide=True))  # a write is no read


def test_the_narrow_and_wide_changes_do_not_overlap() -> None:
    for line in range(1, 8):
        narrow = {m.text for m in mutants(LOOP, line)}
        assert narrow.isdisjoint(m.text for m in mutants(LOOP, line, wide=True))


class SlowGate:
    """The gate's port, every screen taking `seconds` and failing: a round that never finds its fix."""

    def __init__(self, seconds: float) -> None:
        self.seconds, self.screened = seconds, 0

    async def screen(self, changes, seconds):
        self.screened += 1
        await asyncio.sleep(self.seconds)
        return False


async def test_a_round_stops_at_its_time_limit_with_changes_left_untried() -> None:
    """The loop gives the round at most mutant_round.SHARE of the run's time; the round keeps to what it
    is given, and says how many of its changes it tried."""
    code = "def f(a, b):\n    return a < b and a + 1 > b - 1\n"
    base = BaseFiles(read=lambda path: code if path == "m.py" else None)
    said: list[str] = []
    gate = SlowGate(0.2)
    one_round = MutantRound(gate, lambda: _ready(base), [Spot("m.py", 2)], lambda e: said.append(e.text))
    started = time.monotonic()
    assert await one_round.round(0, seconds=0.5) == []  # nothing verified in time
    assert time.monotonic() - started < 1.5
    total = len(mutants(code, 2)) + len(mutants(code, 2, wide=True))
    assert 2 <= gate.screened < total
    assert said[-1].startswith(f"one-token changes: {gate.screened} of {total} tried")


async def _ready(base: BaseFiles) -> BaseFiles:
    return base


class RuleGate:
    """The gate's port: a change passes when its file holds `passes`; every screen is recorded."""

    def __init__(self, passes: str) -> None:
        self.passes, self.screened = passes, []

    async def screen(self, changes, seconds):
        self.screened.append(changes[0].new_text)
        return self.passes in changes[0].new_text

    async def judge(self, changes):
        return Verdict(True, (), changes)


class Verdict:
    def __init__(self, accepted, reasons, changes) -> None:
        self.accepted, self.reasons, self.changes = accepted, reasons, changes


def _changed_line(before: str, after: str) -> int:
    pairs = zip(before.splitlines(), after.splitlines(), strict=True)
    return next(n for n, (a, b) in enumerate(pairs, 1) if a != b)


async def test_once_a_change_is_verified_the_other_changes_of_its_line_go_next() -> None:
    """`>` → `<` verified on line 2: every other change of line 2 (its wide ones too, made after line 4's)
    is tried before any change of line 4, so a rival rule of the same spot (`<=`) joins the pool early."""
    code = "def f(a, b, c):\n    return a > b\n\ndef g(x, y):\n    return x + y * 2 - 1\n"
    base = BaseFiles(read=lambda path: code if path == "m.py" else None)
    gate = RuleGate("return a < b\n")
    one_round = MutantRound(gate, lambda: _ready(base), [Spot("m.py", 2), Spot("m.py", 5)], lambda e: None,
                            parallel=1)  # fmt: skip
    found = await one_round.round(0, seconds=30, want=9, cutoff=lambda: time.monotonic() + 30)
    assert [summary.split(" (")[0] for summary, _ in found] == ["m.py line 2: `>` → `<`"]
    lines = [_changed_line(code, text) for text in gate.screened]
    winner = gate.screened.index(found[0][1][0].new_text)
    after = lines[winner + 1 :]
    assert 5 in after and 2 in after
    assert max(n for n, line in enumerate(after) if line == 2) < after.index(5)
    assert sorted(lines) == sorted(_changed_line(code, m.text) for w in (False, True)
                                   for line in (2, 5) for m in mutants(code, line, wide=w))  # fmt: skip


class FirstWinsGate(RuleGate):
    """The first change screened passes; every later screen takes `seconds`."""

    def __init__(self, seconds: float) -> None:
        super().__init__("")
        self.seconds = seconds

    async def screen(self, changes, seconds):
        self.screened.append(changes[0].new_text)
        if len(self.screened) == 1:
            return True
        await asyncio.sleep(self.seconds)
        return False


async def test_the_first_verified_change_asks_for_the_cutoff_once_and_the_round_keeps_to_it() -> None:
    """The round's first verified change asks the pool when the search stops (FixPool.cutoff): once, at the
    win, and the round ends there with changes left untried, though its own time is far from up."""
    code = "def f(a, b):\n    return a < b and a + 1 > b - 1\n"
    base = BaseFiles(read=lambda path: code if path == "m.py" else None)
    gate = FirstWinsGate(0.2)
    asked: list[float] = []

    def cutoff() -> float:
        asked.append(time.monotonic())
        return asked[0] + 0.3

    one_round = MutantRound(gate, lambda: _ready(base), [Spot("m.py", 2)], lambda e: None)
    found = await one_round.round(0, seconds=60, want=9, cutoff=cutoff)
    assert len(found) == 1 and len(asked) == 1
    total = len(mutants(code, 2)) + len(mutants(code, 2, wide=True))
    assert len(gate.screened) < total
