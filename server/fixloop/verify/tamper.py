"""The tamper guard: every way a change weakens the tests, one line each, written for the model to act on."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from pathlib import PurePosixPath

from fixloop.project import CONFTEST, PYTEST_CONFIG_FILES, PYTEST_SECTIONS, is_startup_hook
from fixloop.result import FileChange

_FIX_THE_CODE = "fix the code under test, not the test"
_SKIP = re.compile(
    r"pytest\.mark\.(skip|skipif|xfail)\b|pytest\.(skip|xfail|importorskip)\s*\(|\bimportorskip\s*\("
    r"|unittest\.(skip|skipIf|skipUnless|expectedFailure)\b|@(skip|skipIf|skipUnless|expectedFailure|xfail)\b"
    r"|\.skipTest\s*\("
)
_ASSERT = re.compile(
    r"^\s*assert\b|\bself\.(assert|fail)\w*\s*\(|\.assert_\w+\s*\(|pytest\.(raises|approx|warns|fail)\b"
)
_PATCH = re.compile(
    r"\bmonkeypatch\.(setattr|setitem|delattr|delitem|syspath_prepend)\b|\bmock\.patch\b|@patch\b"
    r"|\bpatch(\.object|\.dict)?\s*\(|\bmocker\.patch\b|\bsetattr\s*\(|\bsys\.modules\["
)
_TEST_DEF = re.compile(r"^\s*(?:async\s+)?def\s+(test\w*)\s*\(|^\s*class\s+(Test\w*)\b", re.MULTILINE)
# What code under test must never do to make a test "pass".
_CHEAT = re.compile(
    r"pytest\.(skip|xfail|exit|importorskip)\s*\(|PYTEST_CURRENT_TEST|[\"']pytest[\"']\s+in\s+sys\.modules"
    r"|\bos\._exit\s*\("
)
# What code under test must never reach into: the test runner's machinery and fixloop's report plugin.
# Checked on every changed line (all lines of a new file), so code that does it at import is caught too.
_INTERNALS = (
    (re.compile(r"\b_pytest\b"), "reaches into pytest's internals (_pytest)"),
    (re.compile(r"\bpluggy\b"), "reaches into pytest's plugin system (pluggy)"),
    (
        re.compile(
            r"\bpytest\.(hookimpl|hookspec|TestReport|CollectReport|CallInfo|Item|Session|Config|Function"
            r"|Class|Module|Package|Collector|Parser|PytestPluginManager|register_assert_rewrite|main"
            r"|console_main)\b"
        ),
        "reaches into pytest's internals",
    ),
    (re.compile(r"^\s*(?:async\s+)?def\s+pytest_\w+\s*\("), "defines a pytest hook"),
    (re.compile(r"\bpytest_plugins\b"), "loads pytest plugins"),
    (
        re.compile(r"fixloop_pytest_report|FIXLOOP_REPORT_FILE|FIXLOOP_RUN_MARK"),
        "touches fixloop's report plugin",
    ),
    (
        re.compile(
            r"\bsys\.modules\s*\[[^\]]*\]\s*=(?!=)|\bsys\.modules\.(update|pop|setdefault|clear|popitem)\s*\("
            r"|\bdel\s+sys\.modules\b"
        ),
        "rewrites sys.modules",
    ),
    (
        re.compile(
            r"\bbuiltins\.\w+\s*=(?!=)|__builtins__\s*\[[^\]]*\]\s*=(?!=)|setattr\s*\(\s*(builtins|__builtins__)\b"
        ),
        "replaces a builtin",
    ),
    (
        re.compile(r"\bsys\._getframe\b|\binspect\.(stack|currentframe|getouterframes)\s*\("),
        "inspects its callers' frames (to tell whether it is under test)",
    ),
    (re.compile(r"^\s*from\s+pytest\s+import\b"), "imports from pytest"),
)
_CONFIG_SECTIONS = {name: re.compile(pattern) for name, pattern in PYTEST_SECTIONS.items()}
_SECTION_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")


def _section_texts(text: str | None, pattern: re.Pattern[str]) -> list[str]:
    """The pytest sections of an ini/toml file, header and body, in order."""
    if not text:
        return []
    sections: list[str] = []
    current: list[str] | None = None
    for line in text.splitlines():
        header = _SECTION_HEADER.match(line)
        if header:
            if current is not None:
                sections.append("\n".join(current).rstrip())
            current = [line.strip()] if pattern.fullmatch(header.group(1)) else None
        elif current is not None:
            current.append(line.rstrip())
    if current is not None:
        sections.append("\n".join(current).rstrip())
    return sections


def _first_changed_line(old: str, new: str) -> int:
    old_lines, new_lines = old.splitlines(), new.splitlines()
    for index, (a, b) in enumerate(zip(old_lines, new_lines, strict=False)):
        if a != b:
            return index + 1
    return min(len(old_lines), len(new_lines)) + 1


def _config_reasons(change: FileChange) -> list[str]:
    name = PurePosixPath(change.path).name
    if name in PYTEST_CONFIG_FILES:
        verb = "added" if change.old_text is None else "deleted" if change.new_text is None else "changed"
        return [f"{change.path}: pytest configuration {verb} — leave the test setup alone; {_FIX_THE_CODE}"]
    if is_startup_hook(change.path):
        return [
            f"{change.path}: an interpreter start-up hook ({name}) runs before any test — leave it "
            f"alone; {_FIX_THE_CODE}"
        ]
    pattern = _CONFIG_SECTIONS.get(name)
    if pattern is None:
        return []
    if _section_texts(change.old_text, pattern) == _section_texts(change.new_text, pattern):
        return []
    return [
        f"{change.path}: pytest configuration section changed — leave the test setup alone; {_FIX_THE_CODE}"
    ]


def _test_file_reasons(change: FileChange) -> list[str]:
    path = change.path
    if change.old_text is None:
        return [f"{path}: new test file — tests define the expected behaviour; {_FIX_THE_CODE}"]
    if change.new_text is None:
        return [f"{path}: test file deleted — restore it; {_FIX_THE_CODE}"]
    old, new = change.old_text, change.new_text
    if PurePosixPath(path).name == "conftest.py":
        line = _first_changed_line(old, new)
        return [f"{path}: conftest.py changed at line {line} — fixtures and hooks are part of the tests; "
                f"{_FIX_THE_CODE}"]  # fmt: skip
    reasons = _hunk_reasons(path, old, new)
    old_tests = {a or b for a, b in _TEST_DEF.findall(old)}
    new_tests = {a or b for a, b in _TEST_DEF.findall(new)}
    for name in sorted(old_tests - new_tests):
        reasons.append(f"{path}: test {name} deleted or renamed — restore it; {_FIX_THE_CODE}")
    if not reasons:
        line = _first_changed_line(old, new)
        reasons.append(f"{path}: test file changed at line {line} — {_FIX_THE_CODE}")
    return list(dict.fromkeys(reasons))


def _hunk_reasons(path: str, old: str, new: str) -> list[str]:
    """What each changed hunk of a test file does: an assertion changed or deleted, a skip/xfail marker or
    monkeypatching added."""
    old_lines, new_lines = old.splitlines(), new.splitlines()
    reasons: list[str] = []
    skip_added = len(_SKIP.findall(new)) > len(_SKIP.findall(old))
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        for offset, line in enumerate(old_lines[i1:i2]):
            if _ASSERT.search(line):
                if tag == "replace" and j1 + offset < j2:
                    reasons.append(f"{path}: assertion changed at line {j1 + offset + 1} — {_FIX_THE_CODE}")
                else:
                    reasons.append(
                        f"{path}: assertion deleted (was line {i1 + offset + 1}) — {_FIX_THE_CODE}"
                    )
        for offset, line in enumerate(new_lines[j1:j2]):
            number = j1 + offset + 1
            if skip_added and _SKIP.search(line):
                reasons.append(
                    f"{path}: skip/xfail added at line {number} — a skipped test is not a fixed one; "
                    f"{_FIX_THE_CODE}"
                )
            if _PATCH.search(line) and not _PATCH.search(old_lines[i1 + offset] if i1 + offset < i2 else ""):
                reasons.append(
                    f"{path}: monkeypatching added at line {number} — do not replace the code under test "
                    f"from the test side; fix the code itself"
                )
    return reasons


def _cheat_reasons(change: FileChange) -> list[str]:
    if not change.path.endswith(".py") or change.new_text is None:
        return []
    old_lines = set((change.old_text or "").splitlines())
    reasons = []
    for number, line in enumerate(change.new_text.splitlines(), start=1):
        if line in old_lines:
            continue
        if _CHEAT.search(line):
            reasons.append(
                f"{change.path}: line {number} makes tests skip or exit instead of passing — "
                "fix the behaviour the test checks"
            )
            continue
        what = next((what for pattern, what in _INTERNALS if pattern.search(line)), None)
        if what is not None:
            reasons.append(
                f"{change.path}: line {number} {what} — code under test must leave the test "
                f"runner alone; fix the behaviour the test checks"
            )
    return reasons


def tamper_reasons(changes: list[FileChange], is_test_file: Callable[[str], bool]) -> list[str]:
    """One line per way the changes weaken the tests, each naming the file and saying what to do instead."""
    reasons: list[str] = []
    for change in changes:
        config = _config_reasons(change)
        if config:
            reasons.extend(config)
        elif PurePosixPath(change.path).name == CONFTEST or is_test_file(change.path):
            reasons.extend(_test_file_reasons(change))
        else:
            reasons.extend(_cheat_reasons(change))
    return reasons
