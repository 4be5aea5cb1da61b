"""Shadow set-up time on a 5,000-file git repository vs a plain copy: `python benchmarks/shadow_setup.py`."""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path


def build_repo(root: Path, files: int) -> None:
    """A git repo of `files` Python files (~1.5 KB each) in 50 packages, plus some uncommitted work."""
    for index in range(files):
        package = root / f"pkg{index % 50:02d}"
        package.mkdir(parents=True, exist_ok=True)
        body = "".join(f"def function_{index}_{n}(x):\n    return x * {n} + {index}\n\n\n" for n in range(30))
        (package / f"module_{index:05d}.py").write_text(f'"""Module {index}."""\n\n{body}')
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "initial"], cwd=root, check=True)
    (root / "pkg00" / "module_00000.py").write_text("CHANGED = True\n")  # an uncommitted edit
    (root / "pkg01" / "scratch.py").write_text("UNTRACKED = True\n")  # an untracked file


def median_seconds(action: Callable[[], Callable[[], None]], repeat: int) -> tuple[float, list[float]]:
    """Median wall time of `action` (which returns its own clean-up, not timed)."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        cleanup = action()
        times.append(time.perf_counter() - started)
        cleanup()
    return statistics.median(times), times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fixloop-bench-") as scratch:
        base = Path(scratch)
        os.environ["XDG_CACHE_HOME"] = str(base / "cache")  # shadows on the same disk as the repo
        from fixloop.shadow import ShadowWorkspace  # after XDG_CACHE_HOME is set

        repo = base / "repo"
        repo.mkdir()
        started = time.perf_counter()
        build_repo(repo, args.files)
        size = sum(path.stat().st_size for path in repo.rglob("*") if path.is_file())
        built = time.perf_counter() - started
        megabytes = size / 2**20
        cpus = os.cpu_count()
        print(f"repo: {args.files} files, {megabytes:.1f} MiB with .git (built in {built:.1f}s), {cpus} CPUs")

        def shadow() -> Callable[[], None]:
            workspace = ShadowWorkspace.create(repo)
            return workspace.close

        def copy(ignore_git: bool) -> Callable[[], Callable[[], None]]:
            def run() -> Callable[[], None]:
                target = base / "copy"
                ignore = shutil.ignore_patterns(".git") if ignore_git else None
                shutil.copytree(repo, target, symlinks=True, ignore=ignore)
                return lambda: shutil.rmtree(target)

            return run

        rows = [
            ("ShadowWorkspace.create (git clone --shared + checkout)", shadow),
            ("shutil.copytree of the working tree (no .git)", copy(True)),
            ("shutil.copytree of the whole folder (with .git)", copy(False)),
        ]
        for objects in ("loose objects, as right after committing", "packed objects, as after clone or gc"):
            if objects.startswith("packed"):
                subprocess.run(["git", "repack", "-adq"], cwd=repo, check=True)
            print(f"-- {objects}")
            for label, action in rows:
                median, times = median_seconds(action, args.repeat)
                runs = ", ".join(f"{value:.2f}" for value in times)
                print(f"{label}: median {median:.3f}s over {args.repeat} runs ({runs})")


if __name__ == "__main__":
    main()
