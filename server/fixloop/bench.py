"""`fixloop bench`: runs the engine on fixture projects and prints figures (fixed, steps, tokens, seconds)."""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from fixloop.config import load_settings
from fixloop.engine import FixRequest, FixRun
from fixloop.errors import FixloopError

REPO_FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def fixture_names(fixtures: Path) -> list[str]:
    return sorted(p.stem for p in (fixtures / "fixes").glob("*.json")
                  if (fixtures / "projects" / p.stem).is_dir())


def copy_fixture(fixtures: Path, name: str, dest: Path, git: bool) -> Path:
    """A fresh copy of a fixture project (a git repo with one commit when `git`)."""
    target = dest / name
    shutil.copytree(fixtures / "projects" / name, target,
                    ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    if git:
        env_args = ["-c", "user.name=fixloop", "-c", "user.email=fixloop@localhost",
                    "-c", "commit.gpgsign=false"]
        subprocess.run(["git", "init", "-q"], cwd=target, check=True)
        subprocess.run(["git", "add", "-A"], cwd=target, check=True)
        subprocess.run(["git", *env_args, "commit", "-qm", "initial"], cwd=target, check=True)
    return target


async def bench_one(fixtures: Path, name: str, overrides: dict[str, Any]) -> dict[str, Any]:
    fix = json.loads((fixtures / "fixes" / f"{name}.json").read_text())
    with tempfile.TemporaryDirectory(prefix="fixloop-bench-") as tmp:
        root = copy_fixture(fixtures, name, Path(tmp), fix.get("git", True))
        settings = load_settings(root, overrides)
        run = FixRun(FixRequest(root, tuple(fix["test_ids"])), settings)
        try:
            result = await run.execute()
        except FixloopError as error:
            return {"project": name, "status": "error", "steps": run.steps, "prompt_tokens": 0,
                    "completion_tokens": 0, "seconds": 0.0, "summary": error.message,
                    "transcript": str(run.transcript_path)}
        return {"project": name, "status": result.status, "steps": result.steps,
                "prompt_tokens": result.prompt_tokens, "completion_tokens": result.completion_tokens,
                "seconds": round(result.seconds, 1), "summary": result.summary[:120],
                "transcript": result.transcript}


async def run_bench(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    fixtures = (args.fixtures or REPO_FIXTURES).resolve()
    names = args.projects or fixture_names(fixtures)
    rows: list[dict[str, Any]] = []
    for name in names:
        for _ in range(max(1, args.repeat)):
            row = await bench_one(fixtures, name, overrides)
            rows.append(row)
            print(f"{row['project']:<24} {row['status']:<10} steps={row['steps']:<3} "
                  f"prompt={row['prompt_tokens']:<7} completion={row['completion_tokens']:<6} "
                  f"{row['seconds']:>7.1f}s  {row['summary']}", flush=True)
    fixed = [r for r in rows if r["status"] == "fixed"]
    print(f"\nfixed {len(fixed)} of {len(rows)} runs", end="")
    if fixed:
        print(f"; median over fixed: {statistics.median(r['seconds'] for r in fixed):.1f} s, "
              f"{statistics.median(r['prompt_tokens'] for r in fixed):.0f} prompt tokens, "
              f"{statistics.median(r['steps'] for r in fixed):.0f} steps")
    else:
        print()
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    sys.stdout.flush()
    return 0 if len(fixed) == len(rows) else 1
