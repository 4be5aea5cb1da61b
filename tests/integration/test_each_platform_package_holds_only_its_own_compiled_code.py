"""One machine builds the extension for every platform (`node scripts/package.mjs --targets all`): each
.vsix is stamped with its vsce target and holds, for each CPython 3.11-3.14, compiled modules of that
platform only (ELF x86-64/aarch64 linked with glibc, or musl for Alpine; Mach-O x86_64/arm64, not fat;
PE AMD64), from wheels of that platform; the universal one holds no Python. The packages are built once
into a cache folder keyed by what decides their content as checked here (FIXLOOP_VSIX_CACHE, else the user
cache): the extension's files, pyproject.toml (the dependencies whose wheels are bundled) and every file
of the server but its Python sources, which are no compiled module of any platform (a change to them,
the usual one, would rebuild every package for nothing: 90 CPU s); the build needs Node, `npm ci` in
client-vscode, and pip's index.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import platformdirs
import pytest

from support import REPO_ROOT

pytestmark = pytest.mark.timeout(2400)

EXTENSION = REPO_ROOT / "client-vscode"
ABIS = ("cp311", "cp312", "cp313", "cp314")
COMPILED = (".so", ".pyd", ".dylib")
INPUTS = (
    *(f"client-vscode/{part}" for part in ("src", "bundled/tool", "scripts", "images", "package.json",
      "package-lock.json", "README.md", ".vscodeignore", "esbuild.mjs")),
    "server/fixloop",
    "pyproject.toml",
)  # fmt: skip
# target -> (binary format, machine, wheel platform tag prefix)
TARGETS = {
    "linux-x64": ("elf", "x86-64", "manylinux"),
    "linux-arm64": ("elf", "aarch64", "manylinux"),
    "alpine-x64": ("elf", "x86-64", "musllinux"),
    "darwin-x64": ("mach-o", "x86_64", "macosx"),
    "darwin-arm64": ("mach-o", "arm64", "macosx"),
    "win32-x64": ("pe", "AMD64", "win_amd64"),
}
ELF_MACHINES = {62: "x86-64", 183: "aarch64", 3: "x86", 40: "arm"}
MACHO_CPUS = {0x01000007: "x86_64", 0x0100000C: "arm64", 7: "i386", 12: "arm"}
PE_MACHINES = {0x8664: "AMD64", 0xAA64: "ARM64", 0x14C: "i386"}


def inputs_hash() -> str:
    digest = hashlib.sha256()
    for top in INPUTS:
        path = REPO_ROOT / top
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        for file in (f for f in files if "__pycache__" not in f.parts and not _server_source(f)):
            digest.update(file.relative_to(REPO_ROOT).as_posix().encode() + b"\0" + file.read_bytes())
    return digest.hexdigest()[:16]


def _server_source(file: Path) -> bool:
    return file.suffix == ".py" and file.is_relative_to(REPO_ROOT / "server")


@pytest.fixture(scope="module")
def packages() -> dict[str, Path]:
    node = shutil.which("node")
    if node is None or not (EXTENSION / "node_modules" / "@vscode" / "vsce").is_dir():
        pytest.skip("needs Node and `npm ci` in client-vscode")
    root = Path(os.environ.get("FIXLOOP_VSIX_CACHE") or platformdirs.user_cache_dir("fixloop-tests")) / "vsix"
    out = root / inputs_hash()
    names = {target: out / f"fixloop-{target}.vsix" for target in [*TARGETS, "universal"]}
    if not all(path.is_file() for path in names.values()):
        shutil.rmtree(root, ignore_errors=True)  # older builds
        started = time.monotonic()
        done = subprocess.run(
            [node, "scripts/package.mjs", "--targets", "all", "--out", str(out), "--skip-typecheck"],
            cwd=EXTENSION, env={**os.environ, "FIXLOOP_BUNDLE_PYTHON": sys.executable},
            capture_output=True, text=True, timeout=2000,
        )  # fmt: skip
        assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
        print(f"\nbuilt {len(names)} packages in {time.monotonic() - started:.0f} s")
        print(
            "\n".join(line for line in done.stdout.splitlines() if line.startswith(("bundled ", "packed ")))
        )
    for target, path in names.items():
        print(f"fixloop-{target}.vsix: {path.stat().st_size / 1e6:.1f} MB")
    return names


def binary_kind(head: bytes) -> tuple[str, str]:
    """(format, machine) from the first bytes of a compiled module; fat Mach-O lists every arch."""
    if head[:4] == b"\x7fELF":
        endian = "<" if head[5] == 1 else ">"
        return "elf", ELF_MACHINES.get(struct.unpack(endian + "H", head[18:20])[0], "?")
    if head[:4] in (b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe"):
        return "mach-o", MACHO_CPUS.get(struct.unpack("<I", head[4:8])[0], "?")
    if head[:4] == b"\xca\xfe\xba\xbe":
        count = struct.unpack(">I", head[4:8])[0]
        cpus = [struct.unpack(">I", head[8 + 20 * i : 12 + 20 * i])[0] for i in range(min(count, 8))]
        return "mach-o", "+".join(MACHO_CPUS.get(cpu, "?") for cpu in cpus)
    if head[:2] == b"MZ":
        offset = struct.unpack("<I", head[0x3C:0x40])[0]
        if head[offset : offset + 4] == b"PE\0\0":
            return "pe", PE_MACHINES.get(struct.unpack("<H", head[offset + 4 : offset + 6])[0], "?")
    return "?", "?"


def compiled_modules(archive: zipfile.ZipFile) -> list[str]:
    return [n for n in archive.namelist() if n.endswith(COMPILED) or ".so." in n.rsplit("/", 1)[-1]]


@pytest.mark.parametrize("target", list(TARGETS))
def test_every_compiled_module_is_of_the_target_platform(packages: dict[str, Path], target: str):
    form, machine, wheel_tag = TARGETS[target]
    with zipfile.ZipFile(packages[target]) as archive:
        manifest_xml = archive.read("extension.vsixmanifest").decode()
        assert f'TargetPlatform="{target}"' in manifest_xml
        native = json.loads(archive.read("extension/bundled/native/manifest.json"))
        assert native["platform"] == target and tuple(native["abis"]) == ABIS, native
        assert {"pydantic_core", "jiter"} <= set(native["packages"]), native
        modules = compiled_modules(archive)
        wrong = []
        for name in modules:
            data = archive.read(name)
            kind = binary_kind(data[:4096])
            if kind != (form, machine):
                wrong.append(f"{name}: {kind}")
            glibc = b"GLIBC_" in data  # glibc's symbol versions; musl has none
            if form == "elf" and glibc != (wheel_tag == "manylinux"):
                wrong.append(f"{name}: {'glibc' if glibc else 'musl'} libc")
        assert not wrong, wrong
        for abi in ABIS:  # every CPython has its own build of every compiled package
            here = [n for n in modules if f"/bundled/native/{abi}/" in n]
            tops = {n.split(f"/native/{abi}/", 1)[1].split("/", 1)[0] for n in here}
            assert {"pydantic_core", "jiter"} <= tops, (abi, tops)
            versions = {v for n in here for v in re.findall(r"(?:cpython-|\.cp)(3\d+)", n.rsplit("/", 1)[-1])}
            assert versions == {abi[2:]}, (abi, versions)  # each module built for this CPython
        assert not [n for n in modules if "/bundled/native/" not in n], "compiled code outside native/"
        has_colorama = "extension/bundled/libs/colorama/__init__.py" in archive.namelist()
        assert has_colorama == (target == "win32-x64")  # pytest needs it on Windows only
        for name in (n for n in archive.namelist() if n.endswith(".dist-info/WHEEL")):
            tags = [line[5:] for line in archive.read(name).decode().splitlines() if line.startswith("Tag: ")]
            platforms = {tag.rsplit("-", 1)[1] for tag in tags}
            expected = {"any"} if "/bundled/libs/" in name else None
            ok = platforms <= expected if expected else all(p.startswith(wheel_tag) for p in platforms)
            assert ok, (name, tags)


def test_the_universal_package_holds_no_python_and_no_target(packages: dict[str, Path]):
    with zipfile.ZipFile(packages["universal"]) as archive:
        assert "TargetPlatform=" not in archive.read("extension.vsixmanifest").decode()
        names = archive.namelist()
        assert "extension/bundled/tool/launch_server.py" in names and "extension/dist/extension.js" in names
        assert not compiled_modules(archive)
        assert not [
            n for n in names if n.startswith(("extension/bundled/libs/", "extension/bundled/native/"))
        ]
