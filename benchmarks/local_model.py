"""The managed local model served two ways, in one run on one machine: llama-cpp-python's server ("old";
"today": as issue 18 found it, every prompt token's logits kept and a 16,384-token context) against
llama.cpp's own llama-server with parallel slots ("new"; "new-kept": again, with the prompt the "new" run
kept, its first; "new-spec": with n-gram speculative decoding, to decide whether it pays).

    python benchmarks/local_model.py                              # demo + 3 bench cases, demo x5
    python benchmarks/local_model.py --quick                      # demo only, demo x1: a smoke run
    python benchmarks/local_model.py --cases demo,shipping_quotes --demo-runs 3 --servings new
    python benchmarks/local_model.py --transcripts /tmp/runs                # each run's transcript kept

Per case and serving, a child process runs one fix (`model: local`, the model's profile: a 6-candidate
sampling round first) through the engine, as the CLI does, and reports: the model server's peak resident
memory (VmHWM, read from /proc before the server stops), candidates per minute in the first sampling round
(replies drawn / the round's drawing time), seconds from the run's start to the first verified candidate,
the run's wall time and status; then, on the same server, prompt tokens/s and decode tokens/s of one
streamed whole-function request (a fresh prompt: time to the first token; then the stream's pieces per
second). A second child, on a server of its own, draws the case's first round whole ("6-round"): all 6
candidates, a verified one does not end the drawing, and the run is stopped when the round ends; its
candidates per minute are those of a full 6-candidate round, which a run that fixes the bug with its first
candidate never shows. The demo's wall time is `fixloop demo --model local` (warm: the model
downloaded), the median of --demo-runs. Servings alternate (old new, new old, ...) so a change in the
machine's load hits both; the 1-minute load average is printed with every row. Each case's runs read its
prompt cold: each has a user cache of its own, so no kept prompt (model/prompt_store.py) serves it, but
"new-kept", which runs right after "new" in the same cache, as a retry or a second `fixloop demo` would.

Old needs llama-cpp-python[server] in --llama-python (default: $FIXLOOP_LLAMA_PYTHON, else this
interpreter); new needs llama-server (--llama-server, default: where fixloop finds it). Both need the
1.5B model (`fixloop model pull`). Linux only (/proc).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
CASES = ["demo", "shipping_quotes", "payroll_roles", "sales_pipeline"]
# new-kept: llama-server again on the case, its prompt kept by the "new" run before it (a retry, the demo's
# second run); new-spec: llama-server with n-gram speculation
SERVINGS = ["today", "old", "new", "new-kept", "new-spec"]
TODAY_ENV = "LOCAL_MODEL_BENCH_TODAY"  # the child serves "old" as issue 18 found it
TODAY_CONTEXT = 16384  # llama-cpp-python's `--n_ctx` then


# ---- the child: one fix run and one speed probe on one serving ----------------------------------------


def case_project(name: str) -> tuple[Path, list[str]]:
    """(project folder, failing test ids) of a fixture project or an own bench project."""
    fixture = REPO / "fixtures" / "projects" / name
    if fixture.is_dir():
        return fixture, json.loads((REPO / "fixtures" / "fixes" / f"{name}.json").read_text())["test_ids"]
    bench = REPO / "fixtures" / "bench" / "projects" / name
    return bench, json.loads((bench / "case.json").read_text())["failing_test_ids"]


def copy_with_git(source: Path) -> Path:
    root = Path(tempfile.mkdtemp(prefix="local-model-bench-")) / source.name
    shutil.copytree(source, root, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache", "case.json"))
    quiet = {"cwd": root, "check": True, "capture_output": True}
    subprocess.run(["git", "init", "-q"], **quiet)
    subprocess.run(["git", "add", "-A"], **quiet)
    subprocess.run(
        ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-qm", "case"],
        **quiet,
    )
    return root


def peak_rss(pid: int) -> int:
    """VmHWM of a process, in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def round_figures(events: list[tuple[float, Any]]) -> dict[str, Any]:
    """Candidates per minute in the first sampling round and seconds to the first verified candidate."""
    from fixloop.events import Notice, Reply

    start = next(
        ((t, e.step) for t, e in events if isinstance(e, Notice) and e.text.startswith("drawing up to")), None
    )
    verified = next(
        (
            t
            for t, e in events
            if isinstance(e, Notice) and e.kind == "candidate" and ": verified (" in e.text
        ),
        None,
    )
    figures: dict[str, Any] = {"first_verified_s": verified}
    if start is None:
        return figures
    began, step = start
    replies = [t for t, e in events if isinstance(e, Reply) and e.step == step and t >= began]
    if replies:  # the notice opens the round, before the best guess is asked for
        drawing = max(replies) - began
        figures.update(
            candidates=len(replies), round_s=drawing, per_minute=60 * len(replies) / max(drawing, 1e-9)
        )
    return figures


async def probe(base_url: str, name: str, source: str) -> dict[str, float]:
    """Prompt and decode tokens/s of one streamed request that asks for a whole function back."""
    nonce = f"# request {time.time_ns()}\n"  # a prompt no cache holds
    body = {
        "model": name,
        "messages": [
            {"role": "user", "content": nonce + "Rewrite this module whole, same code:\n\n" + source[:6000]},
        ],
        "max_tokens": 256,
        "temperature": 0,
        "stream": True,
    }

    def run() -> dict[str, float]:
        request = urllib.request.Request(
            f"{base_url}/chat/completions", json.dumps(body).encode(), {"Content-Type": "application/json"}
        )
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        sent = time.monotonic()
        first = last = 0.0
        pieces = 0
        with opener.open(request, timeout=600) as response:
            for raw in response:
                line = raw.decode().strip()
                if not line.startswith("data: {"):
                    continue
                delta = json.loads(line[6:])["choices"]
                if delta and delta[0].get("delta", {}).get("content"):
                    last = time.monotonic()
                    first = first or last
                    pieces += 1
        count = dict(body, stream=False, max_tokens=1)
        request = urllib.request.Request(
            f"{base_url}/chat/completions", json.dumps(count).encode(), {"Content-Type": "application/json"}
        )
        with opener.open(request, timeout=600) as response:
            prompt_tokens = json.loads(response.read())["usage"]["prompt_tokens"]
        return {
            "prompt_tokens": prompt_tokens,
            "prompt_tps": prompt_tokens / max(first - sent, 1e-9),
            "decode_tps": (pieces - 1) / max(last - first, 1e-9),
        }

    return await asyncio.to_thread(run)


def wait_idle(base_url: str, seconds: float = 60) -> None:
    """Until no slot of a llama-server still decodes a reply the run's end cut off (the probe would share
    the cores with it); at once for llama-cpp-python's server, which has no /slots."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with opener.open(base_url.removesuffix("/v1") + "/slots", timeout=5) as response:
                if not any(slot.get("is_processing") for slot in json.loads(response.read())):
                    return
        except (OSError, ValueError):
            return
        time.sleep(0.5)


def drawing_whole_rounds() -> None:
    """A verified candidate no longer ends a round's drawing: the round's pace is measured, not the run's."""
    from fixloop.agent import sampling

    should_stop = sampling.CandidateSearch._should_stop

    def ignoring_verified(self: Any, state: Any) -> bool:
        verified, state.verified = state.verified, []
        try:
            return should_stop(self, state)
        finally:
            state.verified = verified

    sampling.CandidateSearch._should_stop = ignoring_verified  # type: ignore[method-assign]


def line_as_found(line: list[str]) -> list[str]:
    """The fallback's llama-cpp-python command line as issue 18 found it: `--n_ctx 16384`, and its default
    `logits_all` (true) instead of `--logits_all false`."""
    at = line.index("--logits_all")
    line = line[:at] + line[at + 2 :]
    line[line.index("--n_ctx") + 1] = str(TODAY_CONTEXT)
    return line


def serving_as_found() -> None:
    """The child serves llama-cpp-python's server as issue 18 found it (`line_as_found`)."""
    from fixloop.model import llama_server

    args = llama_server.Serving.args

    def as_found(self: Any, model: Path, alias: str, port: int) -> list[str]:
        line = args(self, model, alias, port)
        return line_as_found(line) if self.kind == llama_server.LLAMA_CPP_PYTHON else line

    llama_server.Serving.args = as_found  # type: ignore[method-assign]


async def child(case: str, max_seconds: float, whole_round: bool = False) -> dict[str, Any]:
    """One fix run of `case` and the speed probe; with `whole_round`, only the first round, drawn whole."""
    from fixloop.config import load_settings
    from fixloop.engine import FixRequest, FixRun
    from fixloop.events import Notice
    from fixloop.model import local

    if os.environ.get(TODAY_ENV):
        serving_as_found()
    if whole_round:
        drawing_whole_rounds()
    source, ids = case_project(case)
    root = copy_with_git(source)
    # the model's serving is measured: the one-token round (no model) is off; the first round's figures
    # need no more than `max_seconds` of the run
    settings = load_settings(root, {"model": "local", "mutants": False, "maxSeconds": max_seconds}, env={})
    started = time.monotonic()
    events: list[tuple[float, Any]] = []
    result: dict[str, Any] = {"case": case}
    running: asyncio.Task[Any] | None = None

    def record(event: Any) -> None:
        events.append((time.monotonic() - started, event))
        if whole_round and isinstance(event, Notice) and event.kind == "round" and running is not None:
            running.cancel()  # the first round is over: the rest of the run is not measured

    try:
        running = asyncio.ensure_future(FixRun(FixRequest(root, tuple(ids)), settings, record).execute())
        try:
            done = await running
            result.update(status=str(done.status.value if hasattr(done.status, "value") else done.status))
        except asyncio.CancelledError:
            result.update(status="round")
        result.update(wall_s=time.monotonic() - started, **round_figures(events))
        (server,) = local._shared.values()
        assert server.pid is not None and server.base_url is not None
        described = server.serving.describe()
        if os.environ.get(TODAY_ENV):  # its context is not the fallback's
            described = (
                "llama-cpp-python's server as issue 18 found it (one request at a time, --n_ctx "
                f"{TODAY_CONTEXT}, every prompt token's logits kept)"
            )
        result.update(serving=described, slots=server.serving.slots)
        if whole_round:
            result["peak_rss"] = peak_rss(server.pid)
            return result
        code = "\n".join(path.read_text() for path in sorted(root.rglob("*.py")) if "test" not in path.name)
        await asyncio.to_thread(wait_idle, server.base_url)
        result.update(await probe(server.base_url, server.model_name, code))
        result["peak_rss"] = peak_rss(server.pid)
    finally:
        await local.stop_local_server()
        shutil.rmtree(root.parent, ignore_errors=True)
    return result


# ---- the parent: servings alternated, a table --------------------------------------------------------


def serving_env(serving: str, args: argparse.Namespace, cache: Path | None = None) -> dict[str, str]:
    """The child's environment; with `cache`, its user cache (kept prompts, transcripts) is there, not the
    user's, and the models are still found."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FIXLOOP_MODEL", "OPENAI_"))}
    if "FIXLOOP_MODELS_DIR" in os.environ:
        env["FIXLOOP_MODELS_DIR"] = os.environ["FIXLOOP_MODELS_DIR"]
    if cache is not None:
        from fixloop.model.pull import models_dir

        env.update(XDG_CACHE_HOME=str(cache), FIXLOOP_MODELS_DIR=str(models_dir()))
    if serving in ("old", "today"):
        env["FIXLOOP_LLAMA_SERVER"] = "none"
        env["FIXLOOP_LLAMA_PYTHON"] = args.llama_python
        if serving == "today":
            env[TODAY_ENV] = "1"
    else:
        if args.llama_server:
            env["FIXLOOP_LLAMA_SERVER"] = args.llama_server
        env["FIXLOOP_LLAMA_SPECULATION"] = "on" if serving == "new-spec" else "off"
    return env


def serving_order(servings: list[str], index: int) -> list[str]:
    """The servings of the `index`th case: reversed every other case, so that a change in the machine's
    speed hits both sides; new-kept always right after new, whose prompt it finds."""
    order = [serving for serving in servings if serving != "new-kept"]
    order = order if index % 2 == 0 else order[::-1]
    if "new-kept" in servings:
        order.insert(order.index("new") + 1 if "new" in order else len(order), "new-kept")
    return order


def transcripts_in(cache: Path) -> set[Path]:
    return set((cache / "fixloop" / "transcripts").glob("*"))


def copy_new(files: set[Path], folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for path in files:
        shutil.copy2(path, folder / path.name)


def load() -> float:
    return os.getloadavg()[0]


def run_case(
    case: str, serving: str, args: argparse.Namespace, cache: Path, whole_round: bool = False
) -> dict[str, Any]:
    child = [sys.executable, __file__, "--child", case, "--max-seconds", str(args.max_seconds)]
    try:
        done = subprocess.run(
            [*child, *(["--whole-round"] if whole_round else [])],
            capture_output=True,
            text=True,
            env=serving_env(serving, args, cache),
            timeout=args.timeout,
        )
    except subprocess.TimeoutExpired:  # a row that says so, and the next serving still runs
        return {"case": case, "error": f"no result within --timeout {args.timeout:g} s"}
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        return {"case": case, "error": (done.stderr.strip().splitlines() or ["no output"])[-1][:200]}
    return json.loads(lines[-1])


def demo_seconds(serving: str, args: argparse.Namespace) -> float | None:
    started = time.monotonic()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "fixloop", "demo", "--model", "local"],
            capture_output=True,
            text=True,
            env=serving_env(serving, args),
            timeout=args.timeout,
        )
    except subprocess.TimeoutExpired:
        return None
    return time.monotonic() - started if done.returncode == 0 else None


def show(value: Any, form: str = "{:.1f}") -> str:
    return "-" if value is None else form.format(value)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child:
        print(json.dumps(asyncio.run(child(args.child, args.max_seconds, args.whole_round))), flush=True)
        return 0
    cases = ["demo"] if args.quick else [c.strip() for c in args.cases.split(",") if c.strip()]
    servings = [s.strip() for s in args.servings.split(",") if s.strip() in SERVINGS]
    print_table(measure(cases, servings, args), cases)
    demo_runs = min(args.demo_runs, 1) if args.quick else args.demo_runs
    if demo_runs:
        times: dict[str, list[float | None]] = {serving: [] for serving in servings}
        for run in range(demo_runs):
            for serving in servings if run % 2 == 0 else servings[::-1]:
                times[serving].append(demo_seconds(serving, args))
        for serving, values in times.items():
            ok = [value for value in values if value is not None]
            median = statistics.median(ok) if ok else None
            shown = ", ".join(show(value) for value in values)
            print(f"demo wall time, {serving}: median {show(median)} s of {len(values)} ({shown})")
    return 0


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated (default: %(default)s)")
    parser.add_argument(
        "--servings",
        default="today,old,new,new-kept",
        help="among today, old, new, new-kept, new-spec (default: %(default)s)",
    )
    parser.add_argument("--demo-runs", type=int, default=5, help="demo wall-time runs per serving (0: none)")
    parser.add_argument("--quick", action="store_true", help="the demo case only, one demo run")
    parser.add_argument("--llama-python", default=os.environ.get("FIXLOOP_LLAMA_PYTHON") or sys.executable)
    parser.add_argument("--llama-server", default="", help="a llama-server to use (default: fixloop's)")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds a run may take")
    parser.add_argument(
        "--max-seconds", type=float, default=240, help="a fix run's time budget (its first round's figures)"
    )
    parser.add_argument(
        "--transcripts", type=Path, help="copy each run's transcript to DIR/<case>/<serving>/ (default: none)"
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--whole-round", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--no-whole-round", dest="round_child", action="store_false", help="no 6-round child (quicker)"
    )
    return parser.parse_args(argv)


def run_kept(
    case: str, serving: str, args: argparse.Namespace, cache: Path, whole_round: bool = False
) -> dict[str, Any]:
    """One child's figures, printed as they come; with --transcripts, the transcripts it wrote copied to
    DIR/<case>/<serving>[-round]/ before its cache goes (a run's variance is read in them)."""
    kept = transcripts_in(cache)
    figures = run_case(case, serving, args, cache, whole_round)
    label = " whole round" if whole_round else ""
    print(f"{serving} {case}{label}: {json.dumps(figures)}", file=sys.stderr, flush=True)
    if args.transcripts is not None:
        folder = f"{serving}-round" if whole_round else serving
        copy_new(transcripts_in(cache) - kept, args.transcripts / case / folder)
    return figures


def measure(cases: list[str], servings: list[str], args: argparse.Namespace) -> list[Row]:
    """Each case on each serving: the fix run's figures, its whole round's (a child of its own, read cold
    but for new-kept's), the load average before them."""
    rows: list[Row] = []
    for index, case in enumerate(cases):
        # every serving reads the case's prompt cold (a user cache of its own) but new-kept, which shares
        # the new run's and so finds its prompt kept
        caches = {serving: Path(tempfile.mkdtemp(prefix="local-model-cache-")) for serving in servings}
        if "new" in caches and "new-kept" in caches:
            shutil.rmtree(caches["new-kept"])
            caches["new-kept"] = caches["new"]
        for serving in serving_order(servings, index):
            before = load()
            row = run_kept(case, serving, args, caches[serving])
            whole = None
            if args.round_child:  # cold on a cache of its own, but new-kept's, which finds the prompt kept
                cache = caches[serving] if serving == "new-kept" else Path(tempfile.mkdtemp(prefix="round-"))
                whole = run_kept(case, serving, args, cache, whole_round=True)
                if cache != caches[serving]:
                    shutil.rmtree(cache, ignore_errors=True)
            rows.append(Row(serving, row, whole, before))
        for cache in set(caches.values()):
            shutil.rmtree(cache, ignore_errors=True)
    return rows


@dataclasses.dataclass
class Row:
    """One case on one serving: the fix run's figures, its whole round's, the load average before."""

    serving: str
    run: dict[str, Any]
    whole: dict[str, Any] | None
    load: float


def print_table(rows: list[Row], cases: list[str]) -> None:
    header = (
        "serving  case              status      peak RSS GiB  prompt t/s  decode t/s  cand/min  "
        "1st verified s  wall s  6-round cand/min  6-round s  load"
    )
    print(header)
    for row in rows:
        run, whole = row.run, row.whole or {}
        if "error" in run:
            print(f"{row.serving:<8} {run['case']:<17} error: {run['error']}")
            continue
        rss = max(run.get("peak_rss") or 0, whole.get("peak_rss") or 0) or None
        pace = "error" if "error" in whole else show(whole.get("per_minute"))
        rounds = f"{pace:>16}  {show(whole.get('round_s')):>9}"
        print(
            f"{row.serving:<8} {run['case']:<17} {run.get('status', '-'):<11} "
            f"{show(rss and rss / (1 << 30), '{:.2f}'):>12}  {show(run.get('prompt_tps')):>10}  "
            f"{show(run.get('decode_tps')):>10}  {show(run.get('per_minute')):>8}  "
            f"{show(run.get('first_verified_s')):>14}  {show(run.get('wall_s')):>6}  {rounds}  {row.load:.1f}"
        )
    for row in rows:
        if "error" in (row.whole or {}):
            print(f"{row.serving} {row.run['case']} whole round: error: {row.whole['error']}")
    for row in rows:
        if row.run.get("serving") and row.run["case"] == cases[0]:
            print(f"{row.serving}: {row.run['serving']}")


if __name__ == "__main__":
    sys.exit(main())
