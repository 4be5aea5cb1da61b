"""Per-turn speed of fix runs on the managed local model, checkout against checkout.

    python benchmarks/turn_speed.py --tree before=../fixloop-old --tree after=. --repeat 2 --out runs.jsonl
    python benchmarks/turn_speed.py --tree before=../fixloop-old --tree after=. --demo --repeat 5

Each run is a child process of a checkout's own interpreter (`<tree>/.venv/bin/python`), so two versions of
fixloop are measured the same way; runs are interleaved (A B, then B A, ...) so that a change in the
machine's load hits both, and the 1-minute load average is recorded next to every run. A child fixes one
fixture project with `model: local` (the managed llama.cpp server starts in the run, as in the CLI) and
records, per model request, the request body and each streamed piece with its arrival time, whether the
stream was closed early, and the engine's events. The figures, per turn: prompt tokens (the model's own
tokenizer over the chat template), tokens read from the prompt cache, seconds to the first streamed token
(prompt seconds), generated tokens, tokens generated after the last complete call (unused), seconds to the
first visible thought; per run: wall seconds and fixed or not; echo: tokens of prose that repeat 100+
characters of the prompt's context verbatim, as a share of all generated tokens (a fenced code block is
not prose: under the code edit form it is the answer asked for, a corrected function that repeats most of
the old one).

`--demo` instead times `fixloop demo` (the README's first command, through the language server) per tree.
Needs llama-cpp-python's server ($FIXLOOP_LLAMA_PYTHON, default ~/.cache/fixloop-local/venv/bin/python)
and the 1.5B model. One llama.cpp server at a time: a run first waits (--wait) while another one runs,
then goes ahead and notes how many others are running.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent
LLAMA_PYTHON = Path.home() / ".cache" / "fixloop-local" / "venv" / "bin" / "python"
PROJECTS = ["demo", "easy_compare", "easy_operator", "easy_slice", "helper_chain", "raises_exception"]
_PREFIX_HIT = re.compile(r"Llama\.generate: (\d+) prefix-match hit, remaining (\d+) prompt tokens")


# ---- the child: one fix run, recorded --------------------------------------------------------------


def child(project: str, tree: Path, result_path: Path, base_url: str | None = None) -> None:
    import asyncio

    import httpx2 as httpx
    import openai

    from fixloop.config import load_settings
    from fixloop.engine import FixRequest, FixRun

    fix = json.loads((tree / "fixtures" / "fixes" / f"{project}.json").read_text())
    root = Path(tempfile.mkdtemp(prefix="turn-speed-")) / project
    shutil.copytree(
        tree / "fixtures" / "projects" / project,
        root,
        ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"),
    )
    if fix.get("git", True):
        git = ["git", "-c", "user.name=b", "-c", "user.email=b@b.invalid", "-c", "commit.gpgsign=false"]
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "buggy"]):
            subprocess.run([*git, *args], cwd=root, check=True, capture_output=True)
    requests: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = []

    class Recorded(httpx.AsyncByteStream):
        def __init__(self, inner: Any, record: dict[str, Any]) -> None:
            self.inner, self.record = inner, record

        async def __aiter__(self):
            async for raw in self.inner:
                self.record["pieces"].append([time.monotonic(), raw.decode("utf-8", "replace")])
                yield raw
            self.record["complete"] = True

        async def aclose(self) -> None:
            self.record["closed"] = time.monotonic()
            await self.inner.aclose()

    class Transport(httpx.AsyncBaseTransport):
        def __init__(self) -> None:
            self.inner = httpx.AsyncHTTPTransport()

        async def handle_async_request(self, request: Any) -> Any:
            body = json.loads(request.content or b"{}") if request.url.path.endswith("/completions") else None
            response = await self.inner.handle_async_request(request)
            if body is None:
                return response
            record = {"sent": time.monotonic(), "body": body, "pieces": [], "complete": False, "closed": None}
            requests.append(record)
            return httpx.Response(
                response.status_code,
                headers=response.headers,
                stream=Recorded(response.stream, record),
                extensions=response.extensions,
            )

        async def aclose(self) -> None:
            await self.inner.aclose()

    original = openai.AsyncOpenAI

    class RecordingOpenAI(original):  # type: ignore[misc, valid-type]
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs, http_client=httpx.AsyncClient(transport=Transport(), timeout=None))

    openai.AsyncOpenAI = RecordingOpenAI  # type: ignore[misc]

    def on_event(event: Any) -> None:
        kind = type(event).__name__
        if kind in ("ThoughtDelta", "Calling", "Action", "Reply", "Usage", "Notice"):
            fields = {k: v for k, v in vars(event).items() if isinstance(v, str | int | float | bool | None)}
            events.append({"t": time.monotonic(), "kind": kind, **fields})

    model = {"model": "scripted", "baseUrl": base_url} if base_url else {"model": "local"}
    settings = load_settings(root, {**model, "testTimeout": 60})
    load = os.getloadavg()[0]
    started = time.monotonic()
    result = asyncio.run(FixRun(FixRequest(root, tuple(fix["test_ids"])), settings, on_event).execute())
    wall = time.monotonic() - started
    result_path.write_text(
        json.dumps(
            {
                "project": project,
                "status": result.status,
                "wall": wall,
                "steps": result.steps,
                "started": started,
                "load_start": load,
                "load_end": os.getloadavg()[0],
                "requests": requests,
                "events": events,
            }
        )
    )


# ---- the parent: interleaved runs and their figures ----------------------------------------------------


def llama_servers() -> int:
    """How many llama.cpp servers run on this machine now (other people's, between our runs)."""
    done = subprocess.run(["pgrep", "-f", "llama_cpp.server|llama-server"], capture_output=True, text=True)
    return len(done.stdout.split())


def wait_for_the_machine(limit: float) -> int:
    """Wait (at most `limit` s) while another llama.cpp server runs; how many still run (a figure's note)."""
    deadline = time.monotonic() + limit
    while llama_servers() and time.monotonic() < deadline:
        time.sleep(10)
    return llama_servers()


def run_child(tree: Path, project: str, timeout: float, base_url: str | None = None) -> dict[str, Any]:
    scratch = Path(tempfile.mkdtemp(prefix="turn-speed-env-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FIXLOOP_", "OPENAI_"))}
    env.update(
        XDG_CACHE_HOME=str(scratch / "cache"),
        XDG_STATE_HOME=str(scratch / "state"),
        FIXLOOP_MODELS_DIR=str(Path.home() / ".cache" / "fixloop" / "models"),
        FIXLOOP_LLAMA_PYTHON=os.environ.get("FIXLOOP_LLAMA_PYTHON", str(LLAMA_PYTHON)),
        PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
    )
    result_path = scratch / "run.json"
    python = tree / ".venv" / "bin" / "python"
    try:
        extra = ["--base-url", base_url] if base_url else []
        done = subprocess.run(
            [
                str(python),
                __file__,
                "--child",
                project,
                "--tree-path",
                str(tree),
                "--result",
                str(result_path),
                *extra,
            ],
            env={**env, "FIXLOOP_API_KEY": "none"},
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"project": project, "status": "timeout", "wall": timeout, "requests": [], "events": []}
    if not result_path.exists():
        return {
            "project": project,
            "status": "crashed",
            "error": done.stderr[-2000:],
            "requests": [],
            "events": [],
        }
    record = json.loads(result_path.read_text())
    logs = sorted((scratch / "state").rglob("local-model-*.log"))
    record["server_log"] = "\n".join(log.read_text(errors="replace") for log in logs)
    shutil.rmtree(scratch, ignore_errors=True)
    return record


def tokenize_prompts(bodies: list[dict[str, Any]]) -> list[int]:
    """Prompt tokens of each request as the server reads them: the GGUF's chat template, its tokenizer."""
    if not bodies:
        return []
    script = (
        "import json, sys, glob, os\n"
        "from llama_cpp import Llama\n"
        "from llama_cpp.llama_chat_format import Jinja2ChatFormatter\n"
        "path = glob.glob(os.path.expanduser('~/.cache/fixloop/models/qwen2.5-coder-1.5b*.gguf'))[0]\n"
        "llm = Llama(path, vocab_only=True, verbose=False)\n"
        "meta = llm.metadata\n"
        "eos = llm._model.token_get_text(llm.token_eos()); bos = llm._model.token_get_text(llm.token_bos())\n"
        "fmt = Jinja2ChatFormatter(meta['tokenizer.chat_template'], eos_token=eos, bos_token=bos)\n"
        "out = []\n"
        "for body in json.load(sys.stdin):\n"
        "    prompt = fmt(messages=body['messages'], tools=body.get('tools')).prompt\n"
        "    out.append(len(llm.tokenize(prompt.encode(), add_bos=False, special=True)))\n"
        "print(json.dumps(out))\n"
    )
    done = subprocess.run(
        [os.environ.get("FIXLOOP_LLAMA_PYTHON", str(LLAMA_PYTHON)), "-c", script],
        input=json.dumps(bodies),
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode:
        raise SystemExit(f"tokenizing prompts failed: {done.stderr[-800:]}")
    return json.loads(done.stdout)


def outside_code(text: str) -> str:
    """The text outside code and calls: before the first code fence or `<tool…>` tag and after the last
    fence or closing tag. A small model may open a block for a file name and another for the code, or write
    a call the stream scanner does not take for one (a `<tools>` tag around code in triple quotes) that
    fixloop's reader still applies: everything from the first opener to the last closer is the answer."""
    openers = [i for i in (text.find("```"), text.find("<tool")) if i >= 0]
    if not openers:
        return text
    first = min(openers)
    fence, tag = text.rfind("```"), text.rfind("</tool")
    end = max(fence + 3 if fence > first else -1, text.find(">", tag) + 1 if tag > first else -1)
    return text[:first] if end <= first else text[:first] + text[end:]


def sse_text(record: dict[str, Any]) -> list[tuple[float, str, dict[str, Any] | None]]:
    """(arrival time, content piece, usage) for each streamed chunk with content or usage."""
    out: list[tuple[float, str, dict[str, Any] | None]] = []
    buffer, when = "", 0.0
    for arrived, raw in record["pieces"]:
        buffer += raw
        when = arrived
        while "\n" in buffer:
            line, buffer = buffer.split("\n", 1)
            if not line.startswith("data: {"):
                continue
            chunk = json.loads(line[6:])
            piece = "".join((c.get("delta") or {}).get("content") or "" for c in chunk.get("choices") or [])
            if piece or chunk.get("usage"):
                out.append((when, piece, chunk.get("usage")))
    return out


def turn_figures(record: dict[str, Any], prompt_tokens: int, run: dict[str, Any]) -> dict[str, Any]:
    from fixloop.agent.echo import EchoIndex, echoed_chars
    from fixloop.agent.text_calls.stream import CallScanner

    body = record["body"]
    chunks = sse_text(record)
    text = "".join(piece for _, piece, _ in chunks)
    usage = next((u for _, _, u in reversed(chunks) if u), None)
    pieces = [(when, piece) for when, piece, _ in chunks if piece]
    generated = (usage or {}).get("completion_tokens") or len(pieces)
    tools = [t["function"]["name"] for t in body.get("tools") or []]
    scanner = CallScanner(
        tools or ["read_file", "list_files", "search", "run_tests", "edit_file", "write_file", "submit"]
    )
    scanner.feed(text)
    keep = scanner.keep if scanner.spans else len(text)
    offsets, total = [], 0
    for _, piece in pieces:
        offsets.append(total)
        total += len(piece)
    unused = sum(1 for start in offsets if start >= keep) if scanner.spans else 0
    index = EchoIndex()
    index.add_messages(body["messages"])
    prose = outside_code(text[: scanner.prose_end()] if scanner.spans else text)
    per_char = len(pieces) / max(1, len(text))
    first_token = (pieces[0][0] - record["sent"]) if pieces else None
    shown = [
        e["t"]
        for e in run["events"]
        if e["t"] >= record["sent"]
        and (e["kind"] == "Calling" or (e["kind"] == "ThoughtDelta" and str(e.get("text", "")).strip()))
    ]
    return {
        "prompt_tokens": prompt_tokens,
        "warm_up": body.get("max_tokens") == 1,
        "prompt_seconds": first_token,
        "generated": generated,
        "unused": unused,
        "closed_early": record["closed"] is not None and not record["complete"],
        "first_visible": (min(shown) - record["sent"]) if shown else None,
        "echoed": round(echoed_chars(index, prose) * per_char),
        "seconds": ((pieces[-1][0] if pieces else record["sent"]) - record["sent"]),
    }


def figures(run: dict[str, Any], tokens: list[int]) -> dict[str, Any]:
    turns = [turn_figures(r, n, run) for r, n in zip(run["requests"], tokens, strict=True)]
    hits = [(int(a), int(b)) for a, b in _PREFIX_HIT.findall(run.get("server_log", ""))]
    return {"turns": turns, "cache_hits": hits}


def median(values: list[float]) -> str:
    values = [v for v in values if v is not None]
    return f"{statistics.median(values):.1f}" if values else "-"


def report(runs: list[dict[str, Any]]) -> None:
    trees = list(dict.fromkeys(run["tree"] for run in runs))
    print("\nper run (tree, project, status, wall s, turns, load avg at start/end):")
    for run in runs:
        turns = [t for t in run["figures"]["turns"] if not t["warm_up"]]
        print(
            f"  {run['tree']:>7} {run['project']:<18} {run['status']:<9} {run.get('wall', 0):7.1f} "
            f"{len(turns):3d}  load {run.get('load_start', 0):.1f}/{run.get('load_end', 0):.1f}"
        )
    header = (
        "tree",
        "runs",
        "fixed",
        "wall med",
        "turns",
        "prompt tok",
        "prompt s",
        "gen tok",
        "unused",
        "max unused",
        "1st thought s",
        "echo %",
        "load med",
    )
    print("\n| " + " | ".join(header) + " |\n|" + "---|" * len(header))
    for tree in trees:
        mine = [run for run in runs if run["tree"] == tree]
        turns = [t for run in mine for t in run["figures"]["turns"] if not t["warm_up"]]
        generated = sum(t["generated"] for t in turns)
        row = (
            tree,
            str(len(mine)),
            str(sum(run["status"] == "fixed" for run in mine)),
            median([run.get("wall") for run in mine]),
            str(len(turns)),
            median([t["prompt_tokens"] for t in turns]),
            median([t["prompt_seconds"] for t in turns]),
            median([t["generated"] for t in turns]),
            median([t["unused"] for t in turns]),
            str(max((t["unused"] for t in turns), default=0)),
            median([t["first_visible"] for t in turns]),
            f"{100 * sum(t['echoed'] for t in turns) / max(1, generated):.1f}",
            median([run.get("load_start") for run in mine]),
        )
        print("| " + " | ".join(row) + " |")


def bench_runs(args: argparse.Namespace, trees: dict[str, Path]) -> None:
    runs: list[dict[str, Any]] = []
    order = list(trees)
    for repeat in range(args.repeat):
        for project in args.projects:
            for name in order if (repeat + args.projects.index(project)) % 2 == 0 else order[::-1]:
                others = 0 if args.base_url else wait_for_the_machine(args.wait)
                run = run_child(trees[name], project, args.timeout, args.base_url)
                run["tree"], run["repeat"], run["other_servers"] = name, repeat, others
                run["figures"] = figures(run, tokenize_prompts([r["body"] for r in run["requests"]]))
                runs.append(run)
                turns = [t for t in run["figures"]["turns"] if not t["warm_up"]]
                print(
                    f"{name:>7} {project:<18} {run['status']:<9} {run.get('wall', 0):6.1f}s "
                    f"{len(turns)} turns, load {run.get('load_start', 0):.1f}, {others} other llama "
                    f"server(s)",
                    flush=True,
                )
                if args.out:
                    with args.out.open("a") as out:
                        out.write(json.dumps({k: v for k, v in run.items() if k != "server_log"}) + "\n")
    report(runs)


def demo_runs(args: argparse.Namespace, trees: dict[str, Path]) -> None:
    """`fixloop demo` per tree, interleaved: wall seconds, turns and tokens from its closing lines."""
    rows: list[tuple[str, str, float, float, str]] = []
    order = list(trees)
    for repeat in range(args.repeat):
        for name in order if repeat % 2 == 0 else order[::-1]:
            others = wait_for_the_machine(args.wait)
            scratch = Path(tempfile.mkdtemp(prefix="turn-speed-demo-"))
            env = {k: v for k, v in os.environ.items() if not k.startswith(("FIXLOOP_", "OPENAI_"))}
            env.update(
                XDG_CACHE_HOME=str(scratch / "cache"),
                XDG_STATE_HOME=str(scratch / "state"),
                FIXLOOP_MODELS_DIR=str(Path.home() / ".cache" / "fixloop" / "models"),
                FIXLOOP_LLAMA_PYTHON=os.environ.get("FIXLOOP_LLAMA_PYTHON", str(LLAMA_PYTHON)),
                TMPDIR=str(scratch),
            )
            load = os.getloadavg()[0]
            started = time.monotonic()
            done = subprocess.run(
                [str(trees[name] / ".venv" / "bin" / "fixloop"), "demo"],
                env=env,
                capture_output=True,
                text=True,
                timeout=args.timeout,
            )
            wall = time.monotonic() - started
            tail = " ".join(done.stdout.strip().splitlines()[-3:-1])
            status = "fixed" if done.returncode == 0 else f"exit {done.returncode}"
            rows.append((name, status, wall, load, tail))
            print(
                f"{name:>7} demo {status:<8} {wall:6.1f}s load {load:.1f}, {others} other llama server(s)  "
                f"{tail}",
                flush=True,
            )
            shutil.rmtree(scratch, ignore_errors=True)
    print("\n| tree | runs | fixed | wall median s | walls s | load avg at start |")
    print("|---|---|---|---|---|---|")
    for name in order:
        mine = [row for row in rows if row[0] == name]
        walls = [row[2] for row in mine]
        fixed = sum(r[1] == "fixed" for r in mine)
        print(
            f"| {name} | {len(mine)} | {fixed} | {statistics.median(walls):.1f} | "
            f"{', '.join(f'{w:.0f}' for w in walls)} | {', '.join(f'{r[3]:.1f}' for r in mine)} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--tree",
        action="append",
        default=[],
        metavar="NAME=DIR",
        help="a checkout with its .venv (repeat; default: after=this checkout)",
    )
    parser.add_argument("--projects", nargs="+", default=PROJECTS)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds one run may take")
    parser.add_argument(
        "--wait",
        type=float,
        default=600.0,
        help="seconds to wait for other llama.cpp servers to end before a run",
    )
    parser.add_argument("--out", type=Path, help="append each run (JSON) to this file")
    parser.add_argument("--demo", action="store_true", help="time `fixloop demo` instead")
    parser.add_argument("--base-url", help="an endpoint instead of the managed model (to check the bench)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--tree-path", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.tree_path, args.result, args.base_url)
        return
    trees = dict(spec.split("=", 1) for spec in args.tree) or {"after": str(HERE)}
    paths = {name: Path(path).resolve() for name, path in trees.items()}
    sys.path.insert(0, str(HERE / "server"))
    (demo_runs if args.demo else bench_runs)(args, paths)


if __name__ == "__main__":
    main()
