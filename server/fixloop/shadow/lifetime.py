"""Where shadows live and how they end: removed on close, at exit, and (after a crash) at the next start."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import threading
import time
import weakref
from pathlib import Path
from typing import Protocol

import platformdirs

from fixloop.processes import pid_alive
from fixloop.shadow.files import remove_tree

OWNER_FILE = "owner.json"


class Held(Protocol):
    """A shadow while it exists: the folder holding it, and how to remove it."""

    @property
    def container(self) -> Path: ...

    def close(self) -> None: ...


_open_shadows: weakref.WeakSet[Held] = weakref.WeakSet()
# Containers this process made and has not removed: a shadow being set up is not held yet, and a run
# starting meanwhile must not take its half-made folder for a stale one.
_own_containers: set[Path] = set()
_containers_lock = threading.Lock()


def shadows_dir() -> Path:
    """Where shadows live: the user cache directory, never inside a project."""
    return Path(platformdirs.user_cache_dir("fixloop")) / "shadows"


def new_container(name: str, project: Path) -> Path:
    """A fresh folder for one shadow, with an owner file naming this process (for the stale cleanup)."""
    container = shadows_dir() / f"{name}-{os.getpid()}"
    with _containers_lock:
        container.mkdir(parents=True, exist_ok=False)
        _own_containers.add(container)
    (container / OWNER_FILE).write_text(
        json.dumps({"pid": os.getpid(), "project": str(project), "created": time.time()})
    )
    return container


def hold(shadow: Held) -> None:
    """Remember an open shadow: it is removed at exit if nobody closed it."""
    _open_shadows.add(shadow)


def release(shadow: Held) -> None:
    """Forget a shadow and remove its folder."""
    _open_shadows.discard(shadow)
    remove_tree(shadow.container)
    with _containers_lock:
        _own_containers.discard(shadow.container)


@atexit.register
def _close_open_shadows() -> None:
    for shadow in list(_open_shadows):
        with contextlib.suppress(Exception):
            shadow.close()


def clean_stale_shadows() -> int:
    """Remove shadows left by runs whose process is gone (killed, crashed); returns how many."""
    base = shadows_dir()
    if not base.is_dir():
        return 0
    removed = 0
    for container in base.iterdir():
        if not container.is_dir():
            continue
        pid = -1
        try:
            pid = int(json.loads((container / OWNER_FILE).read_text())["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            with contextlib.suppress(ValueError):
                pid = int(container.name.rsplit("-", 1)[-1])
        if pid == os.getpid():
            with _containers_lock:
                if container in _own_containers:
                    continue
        if pid != os.getpid() and pid_alive(pid):
            continue
        remove_tree(container)
        removed += 1
    return removed
