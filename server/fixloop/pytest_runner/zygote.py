"""A warm pytest (standard library only, run by the project's interpreter): imports pytest once, then runs
each test run it is sent in a forked copy of itself, so a run no longer pays the interpreter's start and
pytest's import (about two thirds of a small project's run).

Run as `python zygote.py` under `reaper.py` (which confines its writes), in the environment of the runs
minus what is per run. It answers one JSON line `{"ready": true}` once pytest is imported (or
`{"error": …}` and exits), then reads one request per line: `{"argv", "cwd", "env", "output", "cap",
"hook"}`. For each it forks a run leader, the reaper of that run: it heads a new session, becomes a child
subreaper, forks the run itself (the request's environment, folder, `sys.path` as `python -m pytest` would
have it, the shadow's import hook when asked, then `pytest.main`) and keeps the last `cap` bytes of its
output; when the run ends, or on SIGTERM, it kills every process the run left behind, writes the output to
`output` and exits with the run's status. The zygote answers `{"pid": leader}` and then
`{"status": wait status}`; it serves one run at a time and ends at the end of its input.
"""

import atexit
import importlib.util
import json
import os
import signal
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))


def _load_reaper():
    """reaper.py under a private name (a project may have a module called `reaper`)."""
    spec = importlib.util.spec_from_file_location("_fixloop_reaper", os.path.join(HERE, "reaper.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _answer(channel, message):
    channel.write((json.dumps(message) + "\n").encode("utf-8"))
    channel.flush()


def _run_path(request, base_path):
    """`sys.path` as `python -m pytest` in the request's folder and environment would start with."""
    ours = [entry for entry in request["env"].get("PYTHONPATH", "").split(os.pathsep) if entry]
    return [request["cwd"], *[entry for entry in ours if entry not in base_path], *base_path]


def _startup_changes():
    """What the interpreter's start (a `sitecustomize`, a `.pth` file) set in its own environment: a run
    started cold would have it too."""
    try:
        with open("/proc/self/environ", "rb") as file:
            entries = file.read().split(b"\0")
    except OSError:
        return {}
    initial = dict(
        entry.decode("utf-8", "surrogateescape").split("=", 1) for entry in entries if b"=" in entry
    )
    return {name: value for name, value in os.environ.items() if initial.get(name) != value}


def _run(request, base_path, pytest, changes):
    """The run itself (the leader's child): never returns."""
    code = 1
    try:
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1):  # as a fresh interpreter has them,
            signal.signal(sig, signal.SIG_DFL)  # not as the leader set them for itself before the fork
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.environ.clear()
        os.environ.update(request["env"])
        os.environ.update(changes)
        os.chdir(request["cwd"])
        sys.path[:] = _run_path(request, base_path)
        sys.dont_write_bytecode = bool(request["env"].get("PYTHONDONTWRITEBYTECODE"))
        sys.argv = [os.path.join(os.path.dirname(pytest.__file__), "__main__.py"), *request["argv"]]
        import tempfile

        tempfile.tempdir = None  # TMPDIR is the run's
        if request.get("hook"):
            import fixloop_shadow_site

            fixloop_shadow_site.install()
        code = pytest.main(request["argv"])
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
    except BaseException:
        import traceback

        traceback.print_exc()
    try:
        threading._shutdown()  # as at the end of an interpreter: wait for the threads the tests left
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(int(code))


def _drain(fd, cap, kept):
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            return
        if not chunk:
            return
        kept.extend(chunk)
        if len(kept) > cap:
            del kept[: len(kept) - cap]


def _lead(request, base_path, pytest, reaper, changes):
    """The run's leader: a new session, the reaper of the run (reaper.guard), the keeper of its output's
    last `cap` bytes (never returns)."""
    status = None
    try:
        os.setsid()
        kept = bytearray()
        read_end, write_end = os.pipe()
        drain = threading.Thread(target=_drain, args=(read_end, int(request["cap"]), kept), daemon=True)

        def start():
            child = os.fork()
            if child == 0:
                os.close(read_end)
                os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
                os.dup2(write_end, 1)
                os.dup2(write_end, 2)
                _run(request, base_path, pytest, changes)
            os.close(write_end)
            drain.start()  # after the fork: a forked child has no threads to lose
            return child

        status = reaper.guard(start)
        drain.join(2.0)  # the sweep closed every writer: the rest of the output is in
        with open(request["output"], "wb") as output:
            output.write(bytes(kept))
    finally:
        os._exit(reaper.exit_code(status))


def main():
    sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or ".") != HERE]
    control = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)  # what pytest's import prints goes nowhere; answers go on `control`
    try:
        import pytest

        reaper = _load_reaper()
    except BaseException as error:
        _answer(control, {"error": f"{type(error).__name__}: {error}"})
        return 1
    base_path, changes = list(sys.path), _startup_changes()
    _answer(control, {"ready": True})
    for line in sys.stdin.buffer:
        request = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        leader = os.fork()
        if leader == 0:
            control.close()
            _lead(request, base_path, pytest, reaper, changes)
        _answer(control, {"pid": leader})
        _, status = os.waitpid(leader, 0)
        _answer(control, {"status": status})
    return 0


if __name__ == "__main__":
    sys.exit(main())
