"""The corpus builder refuses an sdist whose sha256 is not the pinned one, and unknown names, in one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parents[2] / "fixtures" / "bench"
LIBRARY = "parse"


def build(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(BENCH_DIR / "build.py"), "--out", str(tmp_path / "cases"), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def test_an_sdist_that_does_not_match_its_pinned_hash_is_refused(tmp_path: Path) -> None:
    libraries = json.loads((BENCH_DIR / "libraries.json").read_text(encoding="utf-8"))
    pinned = next(library for library in libraries if library["name"] == LIBRARY)
    index = tmp_path / "index"  # a PyPI JSON API on disk, serving a forged archive under the pinned name
    (index / "pypi" / LIBRARY).mkdir(parents=True)
    (index / "files").mkdir()
    (index / "files" / pinned["sdist"]).write_bytes(b"not the pinned archive")
    file = {"filename": pinned["sdist"], "url": f"../../files/{pinned['sdist']}"}
    release = {"releases": {pinned["version"]: [file]}}
    (index / "pypi" / LIBRARY / "json").write_text(json.dumps(release))

    done = build(tmp_path, "--library", LIBRARY, "--cache", str(tmp_path / "cache"), "--pypi", index.as_uri())

    assert done.returncode == 1
    assert f"{pinned['sdist']}: sha256 " in done.stderr and "does not match the pinned" in done.stderr
    assert not (tmp_path / "cache" / pinned["sdist"]).exists()
    assert not [p for p in (tmp_path / "cases").iterdir() if p.is_dir()]


def test_an_unknown_library_or_mutant_is_named_and_exits_2(tmp_path: Path) -> None:
    done = build(tmp_path, "--library", "leftpad", "--mutant", "parse-nope")
    assert done.returncode == 2
    assert done.stderr.strip() == "build.py: unknown library or mutant: leftpad, parse-nope"
