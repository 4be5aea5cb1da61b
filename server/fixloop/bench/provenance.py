"""Where a bench row comes from: fixloop's commit, the model (its file's hash when local), the machine."""

from __future__ import annotations

import os
import platform
import subprocess
from dataclasses import dataclass
from pathlib import Path

from fixloop import __version__


@dataclass(frozen=True)
class Provenance:
    """What each result row carries, so rows from several machines and runs can be told apart."""

    commit: str  # git rev of fixloop's checkout (+dirty), or "fixloop VERSION" when not a checkout
    model_id: str  # the model's name; a local model's also with its file's sha256 prefix
    machine: str  # cores, memory, CPU model


def provenance(model: str) -> Provenance:
    return Provenance(fixloop_commit(), model_id(model), machine())


def fixloop_commit() -> str:
    """The git revision of the checkout fixloop runs from (with "-dirty" when its tracked files changed),
    else the package version."""
    checkout = Path(__file__).resolve().parents[3]
    if not (checkout / ".git").exists():
        return f"fixloop {__version__}"
    try:
        rev = _git(checkout, "rev-parse", "--short=12", "HEAD")
        dirty = _git(checkout, "status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return f"fixloop {__version__}"
    return rev + ("-dirty" if dirty else "") if rev else f"fixloop {__version__}"


def _git(folder: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=10, check=True
    )
    return done.stdout.strip()


def model_id(model: str) -> str:
    """`local` / `local:NAME` as the catalog's name and the first 12 hex digits of its file's sha256 (the
    pull verifies the file against it); any other model as its name."""
    head, _, name = model.strip().partition(":")
    if head != "local":
        return model
    from fixloop.errors import ConfigError
    from fixloop.model.catalog import get_model

    try:
        info = get_model(name or None)
    except ConfigError:
        return model
    return f"{info.name} sha256:{info.sha256[:12]}"


def machine() -> str:
    """`16 cores, 125.7 GiB, AMD EPYC 9654 96-Core Processor` (what this system says of itself)."""
    parts = [f"{os.cpu_count() or 0} cores"]
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        parts.append(f"{memory / 2**30:.1f} GiB")
    except (AttributeError, ValueError, OSError):
        pass
    parts.append(_cpu_model() or platform.machine() or "unknown CPU")
    return ", ".join(parts)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.lower().startswith(("model name", "hardware")) and ":" in line:
                return " ".join(line.split(":", 1)[1].split())
    except OSError:
        pass
    return platform.processor()
