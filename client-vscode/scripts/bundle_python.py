"""Builds bundled/ folders for the .vsix: fixloop and its dependencies for each platform, from any machine.

    python3 scripts/bundle_python.py [--target linux-x64] [--abis 3.11,3.12,3.13,3.14] [--out bundled]
    python3 scripts/bundle_python.py --target win32-x64 --target darwin-arm64 --out stage/{target}/bundled

fixloop is built into a wheel from this checkout and its dependencies are resolved once (pip, wheels
only); then each target's bundled/libs gets fixloop and every pure-Python dependency, plus what only
that target needs (colorama on Windows: pip judges markers by this machine), and bundled/native/cpXY
gets the compiled dependencies (pydantic-core, jiter, coverage) as that target's wheels, one folder per
CPython version in --abis (`pip install --platform ... --python-version ... --only-binary=:all:`). So
one machine builds linux-x64, linux-arm64, alpine-x64, darwin-x64, darwin-arm64 and win32-x64 bundles.
bundled/native/manifest.json names the compiled packages, the CPython versions and the target (the vsce
--target); bundled/bundle.json records what was bundled and a hash of the fixloop sources, so a stale
bundle can be detected. `--target universal` bundles no Python: that package runs the fixloop installed
in the interpreter it is given.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import platform
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

EXTENSION = Path(__file__).resolve().parent.parent
REPO = EXTENSION.parent
DEFAULT_ABIS = "3.11,3.12,3.13,3.14"
COMPILED_SUFFIXES = (".so", ".pyd", ".dylib")
UNIVERSAL = "universal"


def _manylinux(arch: str) -> list[str]:
    """glibc 2.17 (manylinux2014) up to 2.28, the oldest glibc VS Code itself runs on."""
    return [f"manylinux2014_{arch}", *(f"manylinux_2_{minor}_{arch}" for minor in range(17, 29))]


# vsce --target -> the wheel platform tags pip may pick for it (pip widens macosx_11_0 to older macOS).
WHEEL_PLATFORMS = {
    "linux-x64": _manylinux("x86_64"),
    "linux-arm64": _manylinux("aarch64"),
    "alpine-x64": ["musllinux_1_1_x86_64", "musllinux_1_2_x86_64"],
    "darwin-x64": ["macosx_11_0_x86_64"],
    "darwin-arm64": ["macosx_11_0_arm64"],
    "win32-x64": ["win_amd64"],
}
TARGETS = (*WHEEL_PLATFORMS, UNIVERSAL)
# pip evaluates environment markers for this machine even with --platform; these are the target's.
_LINUX = {"sys_platform": "linux", "platform_system": "Linux", "os_name": "posix"}
_DARWIN = {"sys_platform": "darwin", "platform_system": "Darwin", "os_name": "posix"}
_WINDOWS = {"sys_platform": "win32", "platform_system": "Windows", "os_name": "nt"}
TARGET_MARKERS = {
    "linux-x64": {**_LINUX, "platform_machine": "x86_64"},
    "linux-arm64": {**_LINUX, "platform_machine": "aarch64"},
    "alpine-x64": {**_LINUX, "platform_machine": "x86_64"},
    "darwin-x64": {**_DARWIN, "platform_machine": "x86_64"},
    "darwin-arm64": {**_DARWIN, "platform_machine": "arm64"},
    "win32-x64": {**_WINDOWS, "platform_machine": "AMD64"},
}


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
    command = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input", "-q", *args]
    print("+", " ".join(command), flush=True)
    subprocess.run(command, check=True)


def wheel_args(target: str, version: str) -> list[str]:
    """pip options that select wheels of `target` for CPython `version` (3.11)."""
    abi = f"cp{version.replace('.', '')}"
    args = ["--only-binary=:all:", "--python-version", version, "--implementation", "cp", "--abi", abi]
    for plat in WHEEL_PLATFORMS[target]:
        args += ["--platform", plat]
    return args


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
        self.requires = [line.split(": ", 1)[1] for line in headers if line.startswith("Requires-Dist: ")]

    @property
    def compiled(self) -> bool:
        return any(name.endswith(COMPILED_SUFFIXES) or ".so." in name for name in self.files)

    def top_levels(self) -> list[str]:
        """The top-level names this distribution installed (folders and modules), dist-info excluded."""
        tops = {name.split("/", 1)[0] for name in self.files if not name.startswith("..")}
        return sorted(t for t in tops if not t.endswith(".dist-info") and t not in ("bin", "__pycache__"))

    def import_names(self) -> list[str]:
        return [t.removesuffix(".py") for t in self.top_levels() if not t.endswith((".pth", ".data"))]


def build_wheel(into: Path) -> Path:
    """fixloop from this checkout as a wheel (pip installs for another platform only from wheels)."""
    pip("wheel", "--no-deps", "--wheel-dir", str(into), str(REPO))
    return next(into.glob("fixloop-*.whl"))


def install_libs(libs: Path, wheel: Path, target: str, version: str) -> list[Dist]:
    """fixloop and its dependencies for `target` and CPython `version` into `libs`."""
    pip("install", "--no-user", "--no-compile", "--target", str(libs), *wheel_args(target, version),
        str(wheel))  # fmt: skip
    shutil.rmtree(libs / "bin", ignore_errors=True)  # console scripts with this machine's paths
    for cache in libs.rglob("__pycache__"):
        shutil.rmtree(cache, ignore_errors=True)
    return [Dist(info) for info in sorted(libs.glob("*.dist-info"))]


def target_only_requirements(dists: list[Dist], target: str, version: str) -> list[str]:
    """Requirements whose markers hold on `target` but that pip skipped, judging markers by this machine."""
    try:
        from packaging.requirements import Requirement
        from packaging.utils import canonicalize_name
    except ImportError:  # a bare python3: pip's own copy
        from pip._vendor.packaging.requirements import Requirement  # type: ignore[no-redef]
        from pip._vendor.packaging.utils import canonicalize_name  # type: ignore[no-redef]
    environment = {**TARGET_MARKERS[target], "python_version": version, "python_full_version": f"{version}.0"}
    have = {canonicalize_name(d.name) for d in dists}
    wanted: list[str] = []
    for line in (line for dist in dists for line in dist.requires):
        requirement = Requirement(line)
        name = canonicalize_name(requirement.name)
        if requirement.marker and name not in have and requirement.marker.evaluate(environment):
            have.add(name)
            wanted.append(f"{requirement.name}{requirement.specifier}")
    return wanted


def add_target_only(libs: Path, dists: list[Dist], target: str, version: str) -> None:
    """Install what only the target needs (colorama for pytest on Windows), until nothing is missing."""
    while wanted := target_only_requirements(dists, target, version):
        pip("install", "--no-user", "--no-compile", "--no-deps", "--target", str(libs),
            *wheel_args(target, version), *wanted)  # fmt: skip
        dists = [*dists, *(Dist(info) for info in sorted(libs.glob("*.dist-info")))]


def copy_dist(dist: Dist, into: Path) -> None:
    into.mkdir(parents=True, exist_ok=True)
    for top in [*dist.top_levels(), dist.info.name]:
        source = dist.info.parent / top
        if source.is_dir():
            shutil.copytree(source, into / top)
        elif source.exists():
            shutil.copy2(source, into / top)


def install_compiled(compiled: list[Dist], native: Path, target: str, version: str) -> str | None:
    """The same releases of the compiled dependencies as `target` wheels for CPython `version`; its ABI
    folder name (cp312), or None when that platform and version have no such wheels."""
    abi = f"cp{version.replace('.', '')}"
    args = ["install", "--no-user", "--no-compile", "--no-deps", "--target", str(native / abi)]
    try:
        pip(*args, *wheel_args(target, version), *(f"{d.name}=={d.version}" for d in compiled))
    except subprocess.CalledProcessError:
        print(f"warning: no {target} wheels of {', '.join(d.name for d in compiled)} for CPython "
              f"{version}; the bundle will not run on it", file=sys.stderr)  # fmt: skip
        shutil.rmtree(native / abi, ignore_errors=True)
        return None
    return abi


def prepare_libs(out: Path, target: str, resolved: list[Dist], version: str) -> None:
    """bundled/libs for `target`: the pure-Python distributions, copied, and what only it needs."""
    for dist in (d for d in resolved if not d.compiled):
        copy_dist(dist, out / "libs")
    add_target_only(out / "libs", resolved, target, version)


def write_records(out: Path, target: str, compiled: list[Dist], abis: list[str]) -> None:
    """native/manifest.json (what the launcher reads) and bundle.json (what was bundled and from what)."""
    libs, native = out / "libs", out / "native"
    manifest = {
        "abis": abis,
        "platform": target,
        "wheelPlatforms": WHEEL_PLATFORMS[target],
        "packages": sorted(name for d in compiled for name in d.import_names()),
    }
    native.mkdir(parents=True, exist_ok=True)
    (native / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    dists = [*(Dist(info) for info in sorted(libs.glob("*.dist-info"))), *compiled]
    fixloop = next(d for d in dists if d.name == "fixloop")
    record = {
        "fixloop": fixloop.version,
        "sourceHash": source_hash(REPO / "server" / "fixloop"),
        "builtWith": f"{sys.implementation.name} {platform.python_version()} on {vsce_target()}",
        "dists": sorted(f"{d.name}=={d.version}" for d in dists),
        "compiled": sorted(f"{d.name}=={d.version}" for d in compiled),
        **manifest,
    }
    (out / "bundle.json").write_text(json.dumps(record, indent=2) + "\n")
    compiled_text = ", ".join(record["compiled"]) or "none"
    print(f"bundled fixloop {fixloop.version} with {len(dists) - 1} dependencies for {target}; "
          f"compiled: {compiled_text} for {', '.join(abis) or '-'}", flush=True)  # fmt: skip


def bundle(outs: dict[str, Path], versions: list[str], jobs: int) -> None:
    """Fill each target's bundled/ folder: one resolution of fixloop's dependencies, then per target its
    pure-Python files (copied) and what only it needs, and per target and CPython version the compiled
    wheels (one pip each, `jobs` at once)."""
    for out in outs.values():
        shutil.rmtree(out / "libs", ignore_errors=True)
        shutil.rmtree(out / "native", ignore_errors=True)
        (out / "bundle.json").unlink(missing_ok=True)
    targets = [t for t in outs if t != UNIVERSAL]
    if not targets:
        return
    with tempfile.TemporaryDirectory(prefix="fixloop-bundle-") as work:
        wheel = build_wheel(Path(work) / "wheel")
        resolved = install_libs(Path(work) / "resolved", wheel, targets[0], versions[0])
        compiled = [d for d in resolved if d.compiled]
        pairs = [(t, v) for t in targets for v in versions] if compiled else []
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            libs = [pool.submit(prepare_libs, outs[t], t, resolved, versions[0]) for t in targets]
            natives = [pool.submit(install_compiled, compiled, outs[t] / "native", t, v) for t, v in pairs]
            for future in libs:
                future.result()
            abis = [future.result() for future in natives]
    for target in targets:
        made = [abi for (t, _), abi in zip(pairs, abis, strict=True) if t == target and abi]
        write_records(outs[target], target, compiled, sorted(made))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", action="append", choices=TARGETS,
                        help="a vsce target; repeat for several (default: this machine's)")  # fmt: skip
    parser.add_argument("--abis", default=DEFAULT_ABIS, help=f"CPython versions (default {DEFAULT_ABIS})")
    parser.add_argument("--out", default=str(EXTENSION / "bundled"),
                        help="the bundled/ folder to fill; with several targets, a path with {target}",
                        )  # fmt: skip
    parser.add_argument("--jobs", type=int, default=6, help="pip installs at once (default 6)")
    args = parser.parse_args()
    if sys.version_info < (3, 11):  # noqa: UP036 (any python3 may run this script)
        print(f"bundle_python.py needs Python 3.11+ (fixloop's own requirement); this is {sys.version}",
              file=sys.stderr)  # fmt: skip
        return 2
    targets = args.target or [vsce_target()]
    if len(targets) > 1 and "{target}" not in args.out:
        parser.error("with several --target, --out must contain {target}")
    unknown = [t for t in targets if t not in TARGETS]
    if unknown:
        parser.error(f"this machine ({unknown[0]}) is no target; pass --target (one of {', '.join(TARGETS)})")
    versions = sorted(args.abis.split(","), key=lambda v: tuple(int(p) for p in v.split(".")))
    bundle({t: Path(args.out.replace("{target}", t)) for t in targets}, versions, args.jobs)
    if UNIVERSAL in targets:
        print("universal: bundled no Python; it runs the fixloop installed in its interpreter")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
