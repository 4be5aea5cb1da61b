"""How fast a run fails on an endpoint it cannot use: `python benchmarks/preflight.py [--repeat N]`.

Times `fixloop fix TEST --root PROJECT -q` end to end as a user runs it (interpreter start-up included) on
the demo project, for a dead endpoint (nothing listening), a misnamed model and a rejected key (the scripted
model answering as OpenAI does), and the same on a git repository of `--files` files, where the shadow copy
takes longer than the preflight (the run waits for the copy it started to be removed). Each case must end
with exit 2 and one line on stderr. Prints the median and the slowest of `--repeat` runs per case.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE / "tests"))
sys.path.insert(0, str(HERE / "server"))

from scripted_model import ScriptedModelServer  # noqa: E402
from scripted_model.flavours import OPENAI_KEY  # noqa: E402

TARGET = "tests/test_mathutils.py::test_factorial_of_five"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def big_repo(root: Path, files: int) -> Path:
    """The demo project plus `files` modules, committed: a copy that takes a while."""
    shutil.copytree(HERE / "fixtures" / "projects" / "demo", root)
    for index in range(files):
        package = root / f"pkg{index % 50:02d}"
        package.mkdir(exist_ok=True)
        (package / f"module_{index:05d}.py").write_text(
            "".join(f"def f{n}(x):\n    return x + {n}\n\n" for n in range(40))
        )
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost", "-c", "commit.gpgsign=false"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "initial"]):
        subprocess.run([*git, *args], cwd=root, check=True)
    return root


def fail_time(root: Path, env: dict[str, str], base_url: str, model: str) -> tuple[float, float, str]:
    """Wall and CPU seconds of one failing `fixloop fix`, and its line on stderr."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "fixloop",
            "fix",
            TARGET,
            "--root",
            str(root),
            "-q",
            "--base-url",
            base_url,
            "--model",
            model,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = done.stderr.strip().splitlines()
    if done.returncode != 2 or len(lines) != 1:
        raise SystemExit(f"expected exit 2 and one line, got {done.returncode}: {done.stderr[-800:]}")
    return seconds, cpu, lines[0]


async def run_fails(root: Path, base_url: str, model: str, key: str | None) -> float:
    """Seconds from FixRun.execute() to its ModelError (nothing remembered from an earlier check)."""
    from fixloop.config import Settings
    from fixloop.engine import FixRequest, FixRun
    from fixloop.errors import ModelError
    from fixloop.model import endpoint

    endpoint._passed.clear()
    os.environ.pop("FIXLOOP_API_KEY", None)
    if key:
        os.environ["FIXLOOP_API_KEY"] = key
    run = FixRun(FixRequest(root, (TARGET,)), Settings(model=model, base_url=base_url))
    started = time.perf_counter()
    try:
        await run.execute()
    except ModelError:
        return time.perf_counter() - started
    raise SystemExit(f"{base_url} {model}: the run did not fail on its endpoint")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--files", type=int, default=5000)
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory(prefix="fixloop-preflight-") as scratch,
        ScriptedModelServer({"model": "gpt-4o-mini", "turns": []}, flavour="openai") as openai_like,
    ):
        base = Path(scratch)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("FIXLOOP_", "OPENAI_"))}
        env.update(XDG_CACHE_HOME=str(base / "cache"), PYTHONPATH=str(HERE / "server"))
        os.environ["XDG_CACHE_HOME"] = str(base / "cache")  # the in-process runs' transcripts
        demo = base / "demo"
        shutil.copytree(HERE / "fixtures" / "projects" / "demo", demo)
        started = time.perf_counter()
        big = big_repo(base / "big", args.files)
        built = time.perf_counter() - started
        print(
            f"projects: demo (3 files), big ({args.files} files, built in {built:.1f} s); "
            f"{os.cpu_count()} CPUs; {args.repeat} runs each"
        )
        dead = f"http://127.0.0.1:{free_port()}/v1"
        cases = [
            ("dead endpoint", dead, "gpt-4o-mini", {}),
            ("misnamed model", openai_like.base_url, "gpt-4o-minj", {"FIXLOOP_API_KEY": OPENAI_KEY}),
            ("rejected key", openai_like.base_url, "gpt-4o-mini", {"FIXLOOP_API_KEY": "sk-wrong"}),
        ]
        for project, root in (("demo", demo), (f"{args.files} files", big)):
            for label, url, model, extra in cases:
                times, cpus = [], []
                for _ in range(args.repeat):
                    seconds, cpu, line = fail_time(root, {**env, **extra}, url, model)
                    times.append(seconds)
                    cpus.append(cpu)
                print(
                    f"{project:>12} | {label:<15} | median {statistics.median(times):.2f} s, "
                    f"slowest {max(times):.2f} s, CPU {statistics.median(cpus):.2f} s | {line[:90]}"
                )
        print("in process (the language server's and the bench's path): FixRun.execute() to its error")
        for project, root in (("demo", demo), (f"{args.files} files", big)):
            for label, url, model, extra in cases:
                times = [
                    asyncio.run(run_fails(root, url, model, extra.get("FIXLOOP_API_KEY")))
                    for _ in range(args.repeat)
                ]
                print(
                    f"{project:>12} | {label:<15} | median {statistics.median(times):.2f} s, "
                    f"slowest {max(times):.2f} s"
                )
        print(f"load average while measuring: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
