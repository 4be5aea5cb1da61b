"""Starts fixloop's language server for the VS Code extension with the bundled or the environment's fixloop.

    python launch_server.py           # serve LSP on stdio
    python launch_server.py --check   # print one JSON line: can this interpreter run fixloop, and which one

FIXLOOP_IMPORT_STRATEGY=useBundled (default) puts the extension's bundled/libs (pure Python) and
bundled/native/<cpXY> (the compiled dependencies for this CPython, when the build had them) in front of
sys.path; fromEnvironment uses whatever fixloop the interpreter has. Written so that very old
interpreters still reach the version check and say why they cannot run fixloop.
"""

# ruff: noqa: UP031, RUF005 (old interpreters must still parse this file and reach the version check)
import json
import os
import sys

MIN_VERSION = (3, 11)
BUNDLED = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIBS = os.path.join(BUNDLED, "libs")
NATIVE = os.path.join(BUNDLED, "native")
EXIT_CANNOT_RUN = 3


def version_text():
    return "%d.%d.%d" % sys.version_info[:3]


def native_manifest():
    """What the build bundled as compiled code: {"abis": [...], "platform": "...", "packages": [...]}."""
    try:
        with open(os.path.join(NATIVE, "manifest.json")) as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return {"abis": [], "platform": "", "packages": []}


def abi_tag():
    return "cp%d%d" % sys.version_info[:2]


def strategy():
    value = os.environ.get("FIXLOOP_IMPORT_STRATEGY", "useBundled")
    return "fromEnvironment" if value == "fromEnvironment" else "useBundled"


def use_bundled_paths():
    """Put the bundle in front of sys.path; False when this build has no bundle (a development build)."""
    if not os.path.isdir(LIBS):
        return False
    paths = [LIBS]
    native = os.path.join(NATIVE, abi_tag())
    if os.path.isdir(native):
        paths.insert(0, native)
    sys.path[0:0] = paths
    return True


def check():
    """The facts the extension needs before it starts the server, as one JSON object."""
    facts = {
        "python": sys.executable,
        "version": version_text(),
        "strategy": strategy(),
        "bundled": False,
        "ok": False,
        "problem": None,
        "fixloop": None,
        "fixloopVersion": None,
    }
    if sys.version_info[:2] < MIN_VERSION:
        facts["problem"] = "too_old"
        return facts
    if facts["strategy"] == "useBundled":
        facts["bundled"] = use_bundled_paths()
        manifest = native_manifest()
        if facts["bundled"] and manifest["packages"] and abi_tag() not in manifest["abis"]:
            facts["problem"] = "no_native"
            facts["abis"] = manifest["abis"]
            facts["platform"] = manifest["platform"]
            return facts
    try:
        import fixloop
        import fixloop.cli  # its imports fail when a dependency is missing

        for name in native_manifest()["packages"] if facts["bundled"] else []:
            __import__(name)
    except ImportError as error:
        facts["problem"] = "not_installed" if getattr(error, "name", None) == "fixloop" else "import_failed"
        facts["detail"] = str(error)
        return facts
    facts["fixloop"] = os.path.dirname(os.path.abspath(fixloop.__file__))
    facts["fixloopVersion"] = getattr(fixloop, "__version__", None)
    facts["ok"] = True
    return facts


def serve():
    if sys.version_info[:2] < MIN_VERSION:
        facts = MIN_VERSION + (sys.executable, version_text())
        sys.stderr.write("fixloop needs Python %d.%d or newer; %s is Python %s\n" % facts)
        return EXIT_CANNOT_RUN
    if strategy() == "useBundled" and not use_bundled_paths():
        sys.stderr.write("fixloop: this build of the extension bundles no fixloop; using the environment's\n")
    try:
        from fixloop.cli import main
    except ImportError:
        from fixloop.lsp import serve as serve_lsp  # an older fixloop without the command line

        return serve_lsp()
    return main(["serve"])


if __name__ == "__main__":
    if sys.argv[1:] == ["--check"]:
        sys.stdout.write(json.dumps(check()) + "\n")
        sys.exit(0)
    sys.exit(serve())
