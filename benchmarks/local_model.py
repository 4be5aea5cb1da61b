"""The managed local model served two ways, in one run on one machine: llama-cpp-python's server ("old")
against llama.cpp's own llama-server with parallel slots ("new"; "new-kept": again, with the prompt the
"new" run kept, its first; "new-spec": with n-gram speculative decoding, to decide whether it pays).

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
second). The demo's wall time is `fixloop demo --model local` (warm: the model downloaded), the median of
--demo-runs. Servings alternate (old new, new old, ...) so a change in the machine's load hits both; the
1-minute load average is printed with every row. Each case's runs read its prompt cold: each has a user
cache of its own, so no kept prompt (model/prompt_store.py) serves it, but "new-kept", which runs right
after "new" in the same cache, as a retry or a second `fixloop demo` would.

Old needs llama-cpp-python[server] in --llama-python (default: $FIXLOOP_LLAMA_PYTHON, else this
interpreter); new needs llama-server (--llama-server, default: where fixloop finds it). Both need the
1.5B model (`fixloop model pull`). Linux only (/proc).
"""

from __future__ import annotations

import argparse
import asyncio
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
SERVINGS = ["old", "new", "new-kept", "new-spec"]


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


async def child(case: str, max_seconds: float) -> dict[str, Any]:
    from fixloop.config import load_settings
    from fixloop.engine import FixRequest, FixRun
    from fixloop.model import local

    source, ids = case_project(case)
    root = copy_with_git(source)
    # the model's serving is measured: the one-token round (no model) is off; the first round's figures
    # need no more than `max_seconds` of the run
    settings = load_settings(root, {"model": "local", "mutants": False, "maxSeconds": max_seconds}, env={})
    started = time.monotonic()
    events: list[tuple[float, Any]] = []
    result: dict[str, Any] = {"case": case}
    try:
        done = await FixRun(
            FixRequest(root, tuple(ids)), settings, lambda e: events.append((time.monotonic() - started, e))
        ).execute()
        result.update(status=str(done.status.value if hasattr(done.status, "value") else done.status))
        result.update(wall_s=time.monotonic() - started, **round_figures(events))
        (server,) = local._shared.values()
        assert server.pid is not None and server.base_url is not None
        result.update(serving=server.serving.describe(), slots=server.serving.slots)
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
    if serving == "old":
        env["FIXLOOP_LLAMA_SERVER"] = "none"
        env["FIXLOOP_LLAMA_PYTHON"] = args.llama_python
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


def run_case(case: str, serving: str, args: argparse.Namespace, cache: Path) -> dict[str, Any]:
    try:
        done = subprocess.run(
            [sys.executable, __file__, "--child", case, "--max-seconds", str(args.max_seconds)],
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
        print(json.dumps(asyncio.run(child(args.child, args.max_seconds))), flush=True)
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
        default="old,new,new-kept",
        help="among old, new, new-kept, new-spec (default: %(default)s)",
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
    return parser.parse_args(argv)


def measure(cases: list[str], servings: list[str], args: argparse.Namespace) -> list[tuple[str, dict, float]]:
    """Each case on each serving: (serving, the child's figures, the load average before it)."""
    rows: list[tuple[str, dict[str, Any], float]] = []
    for index, case in enumerate(cases):
        # every serving reads the case's prompt cold (a user cache of its own) but new-kept, which shares
        # the new run's and so finds its prompt kept
        caches = {serving: Path(tempfile.mkdtemp(prefix="local-model-cache-")) for serving in servings}
        if "new" in caches and "new-kept" in caches:
            shutil.rmtree(caches["new-kept"])
            caches["new-kept"] = caches["new"]
        for serving in serving_order(servings, index):
            before, kept = load(), transcripts_in(caches[serving])
            row = run_case(case, serving, args, caches[serving])
            rows.append((serving, row, before))
            print(f"{serving} {case}: {json.dumps(row)}", file=sys.stderr, flush=True)
            if args.transcripts is not None:  # before the cache goes: a run's variance is read in them
                copy_new(transcripts_in(caches[serving]) - kept, args.transcripts / case / serving)
        for cache in set(caches.values()):
            shutil.rmtree(cache, ignore_errors=True)
    return rows


def print_table(rows: list[tuple[str, dict[str, Any], float]], cases: list[str]) -> None:
    header = (
        "serving  case              status      peak RSS GiB  prompt t/s  decode t/s  cand/min  "
        "1st verified s  wall s  load"
    )
    print(header)
    for serving, row, before in rows:
        if "error" in row:
            print(f"{serving:<8} {row['case']:<17} error: {row['error']}")
            continue
        rss = row.get("peak_rss")
        print(
            f"{serving:<8} {row['case']:<17} {row.get('status', '-'):<11} "
            f"{show(rss and rss / (1 << 30), '{:.2f}'):>12}  {show(row.get('prompt_tps')):>10}  "
            f"{show(row.get('decode_tps')):>10}  {show(row.get('per_minute')):>8}  "
            f"{show(row.get('first_verified_s')):>14}  {show(row.get('wall_s')):>6}  {before:.1f}"
        )
    for serving, row, _ in rows:
        if row.get("serving") and row["case"] == cases[0]:
            print(f"{serving}: {row['serving']}")


if __name__ == "__main__":
    sys.exit(main())
