"""Builds client-vscode/bundled/: fixloop and its dependencies for the .vsix, with pip install --target.

    python3 scripts/bundle_python.py [--abis 3.11,3.12,3.13,3.14]

bundled/libs gets fixloop (built from this checkout) and every pure-Python dependency. Dependencies
with compiled parts (today pydantic-core and jiter, through openai) move to bundled/native/cpXY, one
folder per CPython version, for this machine's platform only: the build interpreter's own wheels plus
the same releases' wheels for the other versions in --abis. bundled/native/manifest.json names them and
the platform (the vsce --target); bundled/bundle.json records what was bundled and a hash of the
fixloop sources, so a stale bundle can be detected.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import platform
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

EXTENSION = Path(__file__).resolve().parent.parent
REPO = EXTENSION.parent
BUNDLED = EXTENSION / "bundled"
LIBS = BUNDLED / "libs"
NATIVE = BUNDLED / "native"
DEFAULT_ABIS = "3.11,3.12,3.13,3.14"
COMPILED_SUFFIXES = (".so", ".pyd", ".dylib")


def source_hash(package: Path) -> str:
    """sha256 over fixloop's source files (names and bytes), the same way tests/e2e computes it."""
    digest = hashlib.sha256()
    for path in sorted(p for p in package.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def vsce_target() -> str:
    """The vsce --target for this machine (linux-x64, darwin-arm64, win32-x64, alpine-x64, ...)."""
    machine = platform.machine().lower()
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64", "armv7l": "armhf"}.get(
        machine, machine
    )
    if sys.platform.startswith("win"):
        return f"win32-{arch}"
    if sys.platform == "darwin":
        return f"darwin-{arch}"
    libc = platform.libc_ver()[0]
    return f"{'alpine' if libc != 'glibc' else 'linux'}-{arch}"


def pip(*args: str) -> None:
    command = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input", *args]
    print("+", " ".join(command), flush=True)
    subprocess.run(command, check=True)


class Dist:
    """One installed distribution in a --target folder, read from its .dist-info."""

    def __init__(self, info: Path) -> None:
        self.info = info
        meta = (info / "METADATA").read_text(encoding="utf-8", errors="replace")
        headers = [line for line in meta.splitlines() if ": " in line and not line[0].isspace()]
        fields = dict(line.split(": ", 1) for line in headers)
        self.name = fields["Name"]
        self.version = fields["Version"]
        record = (info / "RECORD").read_text(encoding="utf-8").splitlines()
        self.files = [line.rsplit(",", 2)[0] for line in record if line.strip()]
        wheel = (info / "WHEEL").read_text(encoding="utf-8").splitlines()
        self.tags = [line.split(": ", 1)[1] for line in wheel if line.startswith("Tag: ")]

    @property
    def compiled(self) -> bool:
        return any(name.endswith(COMPILED_SUFFIXES) or ".so." in name for name in self.files)

    def top_levels(self) -> list[str]:
        """The top-level names this distribution installed (folders and modules), dist-info excluded."""
        tops = {name.split("/", 1)[0] for name in self.files if not name.startswith("..")}
        return sorted(t for t in tops if not t.endswith(".dist-info") and t not in ("bin", "__pycache__"))

    def import_names(self) -> list[str]:
        return [t.removesuffix(".py") for t in self.top_levels() if not t.endswith((".pth", ".data"))]


def install_libs() -> list[Dist]:
    shutil.rmtree(BUNDLED / "libs", ignore_errors=True)
    shutil.rmtree(NATIVE, ignore_errors=True)
    pip("install", "--no-user", "--no-compile", "--upgrade", "--target", str(LIBS), str(REPO))
    shutil.rmtree(LIBS / "bin", ignore_errors=True)  # console scripts with this machine's paths
    for cache in LIBS.rglob("__pycache__"):
        shutil.rmtree(cache, ignore_errors=True)
    return [Dist(info) for info in sorted(LIBS.glob("*.dist-info"))]


def move_compiled(dists: list[Dist]) -> list[Dist]:
    """Move the compiled distributions to native/cpXY of the build interpreter."""
    compiled = [d for d in dists if d.compiled]
    own = NATIVE / f"cp{sys.version_info.major}{sys.version_info.minor}"
    for dist in compiled:
        for top in [*dist.top_levels(), dist.info.name]:
            source = LIBS / top
            if source.exists():
                own.mkdir(parents=True, exist_ok=True)
                shutil.move(str(source), str(own / top))
    return compiled


def platform_tags(dists: list[Dist]) -> list[str]:
    tags: list[str] = []
    for dist in dists:
        for tag in dist.tags:
            for plat in tag.split("-")[2].split("."):
                if plat not in tags and plat != "any":
                    tags.append(plat)
    return tags


def add_other_abis(compiled: list[Dist], versions: list[str]) -> list[str]:
    """Install the same releases of the compiled dependencies for the other CPython versions."""
    own = f"{sys.version_info.major}.{sys.version_info.minor}"
    abis = [f"cp{own.replace('.', '')}"]
    plats = platform_tags(compiled)
    for version in versions:
        if version == own:
            continue
        abi = f"cp{version.replace('.', '')}"
        args = ["install", "--no-user", "--no-compile", "--no-deps", "--only-binary=:all:",
                "--target", str(NATIVE / abi), "--python-version", version, "--implementation", "cp",
                "--abi", abi]  # fmt: skip
        for plat in plats:
            args += ["--platform", plat]
        try:
            pip(*args, *(f"{d.name}=={d.version}" for d in compiled))
        except subprocess.CalledProcessError:
            print(f"warning: no wheels of {', '.join(d.name for d in compiled)} for CPython {version}; "
                  f"the bundle will not run on it", file=sys.stderr)  # fmt: skip
            shutil.rmtree(NATIVE / abi, ignore_errors=True)
            continue
        abis.append(abi)
    return sorted(abis)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--abis", default=DEFAULT_ABIS, help=f"CPython versions (default {DEFAULT_ABIS})")
    args = parser.parse_args()
    if sys.version_info < (3, 11):  # noqa: UP036 (any python3 may run this script)
        print(f"bundle_python.py needs Python 3.11+ (fixloop's own requirement); this is {sys.version}",
              file=sys.stderr)  # fmt: skip
        return 2
    dists = install_libs()
    compiled = move_compiled(dists)
    abis = add_other_abis(compiled, args.abis.split(",")) if compiled else []
    manifest = {
        "abis": abis,
        "platform": vsce_target() if compiled else "",
        "sysconfigPlatform": sysconfig.get_platform(),
        "packages": sorted(name for d in compiled for name in d.import_names()),
    }
    NATIVE.mkdir(parents=True, exist_ok=True)
    (NATIVE / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    fixloop = next(d for d in dists if d.name == "fixloop")
    bundle = {
        "fixloop": fixloop.version,
        "sourceHash": source_hash(REPO / "server" / "fixloop"),
        "builtWith": f"{sys.implementation.name} {platform.python_version()}",
        "dists": sorted(f"{d.name}=={d.version}" for d in dists),
        "compiled": sorted(f"{d.name}=={d.version}" for d in compiled),
        **manifest,
    }
    (BUNDLED / "bundle.json").write_text(json.dumps(bundle, indent=2) + "\n")
    compiled_text = ", ".join(bundle["compiled"]) or "none"
    print(f"bundled fixloop {fixloop.version} with {len(dists) - 1} dependencies; compiled: {compiled_text} "
          f"for {', '.join(abis) or '-'} on {manifest['platform'] or 'any'}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
