"""pytest plugin that writes each test event as a JSON line to $FIXLOOP_REPORT_FILE (stdlib and pytest only).

The runner copies this file next to a temp report file and loads it with `-p fixloop_pytest_report`, so it
must not import fixloop: the project's interpreter may not have it. Lines are written as they happen, so a
run killed on timeout still tells which tests finished and which one was running.
"""

import ast
import faulthandler
import json
import linecache
import os
import re
import reprlib
import signal
import sys
import traceback
import types

import pytest

_ENV = "FIXLOOP_REPORT_FILE"
_MAX_TEXT = 6000
_MAX_FRAMES = 60
STACK_FILE = "stacks.txt"
_fd = None
_stack_file = None
_is_worker = False  # a pytest-xdist worker: the controller reports its tests, the worker only frames
_SHADOW_SITE = "fixloop_shadow_site"  # the runner's startup hook in shadow runs (see shadow_site.py)
RANDOMLY_SEED = 1  # pytest-randomly: one fixed seed, so the baseline and the gate see the same run
_MAX_VALUE = 200  # a value's repr is cut here, as pytest's --showlocals does
_MAX_NAMES = 8
_SECRET_NAME = re.compile(r"key|token|passw|secret|credential|authoriz|cookie", re.IGNORECASE)
_HIDDEN = "<hidden>"
_compared = None  # the last failing comparison of an assert: (op, left, right), from pytest's hook


def _emit(record):
    global _fd
    if _fd is None:
        path = os.environ.get(_ENV)
        if not path:
            return
        _fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)  # open for the whole session
    # One write per line on an O_APPEND descriptor: lines from xdist workers do not interleave.
    os.write(_fd, (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))


def _clip(text):
    if len(text) <= _MAX_TEXT:
        return text
    head = _MAX_TEXT // 4
    return text[:head] + "\n...\n" + text[-(_MAX_TEXT - head) :]


def _message(report):
    longrepr = report.longrepr
    if longrepr is None:
        return ""
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # skip: (path, lineno, reason)
        return str(longrepr[2])
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None and getattr(crash, "message", None):
        return str(crash.message)
    text = str(longrepr)
    lines = [line[1:].strip() for line in text.splitlines() if line.startswith("E ")]
    if lines:
        return "\n".join(lines)
    stripped = [line.strip() for line in text.splitlines() if line.strip()]
    return stripped[-1] if stripped else ""


def _crash(report):
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is None:
        return None
    return [str(getattr(crash, "path", "")), int(getattr(crash, "lineno", 0) or 0)]


def _entry_frames(report):
    """Frames from the rendered traceback, used when the exception object is not available (xdist)."""
    frames = []
    reprtraceback = getattr(report.longrepr, "reprtraceback", None)
    for entry in getattr(reprtraceback, "reprentries", None) or ():
        loc = getattr(entry, "reprfileloc", None)
        if loc is not None:
            frames.append([str(loc.path), int(loc.lineno), ""])
    return frames


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    global _is_worker, _stack_file
    _is_worker = hasattr(config, "workerinput")
    _deterministic(config)
    # Plugins that write into the rootdir by default write into our scratch folder instead.
    scratch = os.path.dirname(os.environ.get(_ENV, "")) or None
    if scratch and str(getattr(config.option, "benchmark_storage", "")).endswith("./.benchmarks"):
        config.option.benchmark_storage = "file://" + os.path.join(scratch, "benchmarks")
    # On timeout the runner sends SIGUSR1 before killing: the stacks then say where a hung test was.
    if scratch and not _is_worker and hasattr(signal, "SIGUSR1"):
        try:
            _stack_file = open(os.path.join(scratch, STACK_FILE), "w", encoding="utf-8")
            faulthandler.register(signal.SIGUSR1, file=_stack_file, all_threads=True)
        except (OSError, RuntimeError, ValueError):
            _stack_file = None


def _deterministic(config):
    """fixloop runs a few chosen tests and compares runs: no pytest-xdist workers (`-n auto` in addopts
    would spawn them for two tests) and pytest-randomly's shuffle and seeds fixed."""
    option = config.option
    if not _is_worker and getattr(option, "numprocesses", None) is not None:
        option.numprocesses = 0
        option.dist = "no"
        option.tx = []
    if getattr(option, "randomly_seed", None) in ("default", "last"):
        option.randomly_seed = RANDOMLY_SEED
    if getattr(option, "randomly_reorganize", None) is True:
        option.randomly_reorganize = False


def pytest_sessionstart(session):
    if _is_worker:
        return
    _emit({"kind": "session_start", "rootdir": str(session.config.rootpath)})
    hook = sys.modules.get(_SHADOW_SITE)
    if hook is not None and hook.redirected:
        _emit({"kind": "redirected", "entries": list(hook.redirected)})


def pytest_collectreport(report):
    if _is_worker:
        return
    if report.failed:
        _emit(
            {
                "kind": "collect_error",
                "nodeid": report.nodeid,
                "message": _clip(_message(report)),
                "longrepr": _clip(str(report.longrepr)),
            }
        )


def pytest_runtest_logstart(nodeid, location):
    global _compared
    _compared = None
    if _is_worker:
        return
    _emit({"kind": "start", "nodeid": nodeid})


def pytest_runtest_logreport(report):
    if _is_worker:
        return
    record = {
        "kind": "report",
        "nodeid": report.nodeid,
        "when": report.when,
        "outcome": report.outcome,
        "duration": float(getattr(report, "duration", 0.0) or 0.0),
    }
    wasxfail = getattr(report, "wasxfail", None)
    if wasxfail is not None:
        record["wasxfail"] = str(wasxfail)
    if report.outcome != "passed" and report.longrepr is not None:
        record["message"] = _clip(_message(report))
        record["longrepr"] = _clip(str(report.longrepr))
        record["crash"] = _crash(report)
        record["entries"] = _entry_frames(report)
    _emit(record)


def pytest_exception_interact(node, call, report):
    excinfo = getattr(call, "excinfo", None)
    if excinfo is None:
        return
    chain = []  # the exception's frames, then its causes' (pytest wraps import errors in CollectError)
    exc, tb = excinfo.value, excinfo.tb
    while tb is not None and len(chain) < 5:
        try:
            summary = traceback.extract_tb(tb)
        except Exception:  # a broken traceback must not break the run
            break
        chain.append([[f.filename, int(f.lineno or 0), f.name] for f in summary][-_MAX_FRAMES:])
        exc = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
        tb = exc.__traceback__ if exc is not None else None
    frames = chain[0] if chain else []
    record = {
        "kind": "frames",
        "nodeid": getattr(node, "nodeid", ""),
        "when": getattr(call, "when", ""),
        "exc_type": getattr(excinfo, "typename", ""),
        "frames": frames,
        "causes": chain[1:],
    }
    if record["when"] == "call":
        try:
            record["inputs"] = _failing_inputs(node, excinfo)
        except Exception:  # what failed is extra: never let it break the report
            pass
    _emit(record)


def pytest_assertrepr_compare(config, op, left, right):
    """Called by pytest's assertion rewriting with the values of a failing comparison: kept, not shown."""
    global _compared
    _compared = (op, left, right)
    return None


def _failing_inputs(node, excinfo):
    """What an engineer looks at first: the failing call's arguments (parametrize values, else the test
    frame's locals at the failing line), the failing line, and expected vs actual of a comparison."""
    frame, lineno = _test_frame(node, excinfo.tb)
    callspec = getattr(node, "callspec", None)
    params = dict(getattr(callspec, "params", None) or {})
    inputs = {"params": _values(params), "locals": []}
    if frame is not None:
        if not params:
            inputs["locals"] = _values(frame.f_locals)
        line = linecache.getline(frame.f_code.co_filename, lineno).strip()
        inputs.update(path=frame.f_code.co_filename, line_number=lineno, line=_cut(line))
        compare = _comparison(line, excinfo)
        if compare is not None:
            inputs["compare"] = compare
    return inputs


def _test_frame(node, tb):
    """The test function's frame in the traceback and its failing line (the innermost in the test file)."""
    function = getattr(node, "function", None) or getattr(node, "obj", None)
    code = getattr(function, "__code__", None)
    path = str(getattr(node, "path", "") or getattr(node, "fspath", ""))
    found = (None, 0)
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_code is code or (found[0] is None and frame.f_code.co_filename == path):
            found = (frame, tb.tb_lineno)
        tb = tb.tb_next
    return found


def _comparison(line, excinfo):
    if _compared is None or not isinstance(excinfo.value, AssertionError):
        return None
    op, left, right = _compared
    left_text, right_text = _operands(line)
    if _is_expected(left_text) and not _is_expected(right_text):  # assert 3 == f(x): the left is expected
        left, right, left_text, right_text = right, left, right_text, left_text
    return {
        "op": str(op),
        "actual": _value(left_text, left),
        "expected": _value(right_text, right),
        "actual_expr": _cut(left_text),
        "expected_expr": _cut(right_text),
    }


def _operands(line):
    try:
        statement = ast.parse(line.strip()).body[0]
    except (SyntaxError, IndexError, ValueError):
        return "", ""
    test = getattr(statement, "test", None)
    if isinstance(test, ast.Compare) and len(test.comparators) == 1:
        return ast.unparse(test.left), ast.unparse(test.comparators[0])
    return "", ""


def _is_expected(text):
    if re.search(r"\b(expected|want|wanted)\w*", text):
        return True
    try:
        ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return bool(text)


def _values(named):
    shown = []
    for name, value in named.items():
        name = str(name)
        if name.startswith(("__", "@")) or not name.isidentifier() or name in ("self", "cls"):
            continue
        if isinstance(value, (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type)):
            continue
        if type(value).__module__.startswith(("_pytest", "pytest")):  # fixtures: monkeypatch, capsys
            continue
        shown.append([name, _value(name, value)])
        if len(shown) == _MAX_NAMES:
            break
    return shown


_REPR = reprlib.Repr()
_REPR.maxstring, _REPR.maxother = 4 * _MAX_VALUE, 4 * _MAX_VALUE  # then cut with a marker by _cut
_REPR.maxlist, _REPR.maxtuple, _REPR.maxdict, _REPR.maxset, _REPR.maxlevel = 20, 20, 12, 20, 4


def _value(name, value):
    if name and _SECRET_NAME.search(name):
        return _HIDDEN
    if isinstance(value, dict) and any(_SECRET_NAME.search(str(key)) for key in value):
        value = {key: _HIDDEN if _SECRET_NAME.search(str(key)) else item for key, item in value.items()}
    try:
        text = _REPR.repr(value)
    except Exception as error:  # a broken __repr__
        text = f"<repr failed: {type(error).__name__}>"
    if isinstance(value, (str, bytes)) and len(text) > _MAX_VALUE:
        return text[:_MAX_VALUE] + f"...[cut: {len(value)} chars in all]"
    return _cut(text)


def _cut(text):
    if len(text) <= _MAX_VALUE:
        return text
    return text[:_MAX_VALUE] + "...[cut]"


def pytest_runtest_logfinish(nodeid, location):
    if _is_worker:
        return
    _emit({"kind": "finish", "nodeid": nodeid})


def pytest_sessionfinish(session, exitstatus):
    hook = sys.modules.get(_SHADOW_SITE)
    if hook is not None:
        hook.record_real_imports()  # also at exit; here too in case the process is killed after the tests
    if _is_worker:
        return
    if hook is not None:
        _emit({"kind": "installed", "modules": hook.installed_packages()[:500]})
    _emit({"kind": "session_finish", "exitstatus": int(exitstatus)})
