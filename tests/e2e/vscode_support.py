"""VS Code e2e helpers: a code-server with the built .vsix and the harness test controller; drive.mjs runs.

code-server runs with a PATH holding Node 24 and the system directories only, so no fixloop is reachable
but the one each test points the extension at (or the one bundled inside the extension).
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from editors_support import E2E_DIR, FAILING_TEST_LINE, REPO_ROOT, E2EEnv, isolated_env, missing, require

EXTENSION_DIR = REPO_ROOT / "client-vscode"
VSIX = EXTENSION_DIR / "dist" / "fixloop.vsix"
HARNESS_DIR = E2E_DIR / "vscode" / "test-controller"
SYSTEM_PATH = "/usr/bin:/bin"

USER_SETTINGS = {
    "security.workspace.trust.enabled": False,
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": False,
    "workbench.secondarySideBar.defaultVisibility": "hidden",
    "telemetry.telemetryLevel": "off",
    "update.mode": "none",
    "extensions.autoCheckUpdates": False,
    "extensions.autoUpdate": False,
    "chat.disableAIFeatures": True,
    "git.enabled": False,
    "remote.autoForwardPorts": False,
    "files.autoSave": "off",
    "testing.automaticallyOpenPeekView": "never",
    "testing.openTesting": "neverOpen",
    "fixloop.trace.server": "verbose",
}


@dataclass
class CodeServer:
    url: str
    trace_file: Path
    log_file: Path
    data_dir: Path
    extensions_dir: Path
    env: E2EEnv

    def fixloop_log(self) -> str:
        """The extension's "fixloop" output channel, as code-server wrote it to its logs folder."""
        logs = sorted(self.data_dir.glob("logs/**/*fixloop.log"))
        return "\n".join(p.read_text(errors="replace") for p in logs)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def harness_vsix(out: Path) -> Path:
    """The test-controller harness packed as a .vsix (a zip with a manifest; no build step needed)."""
    manifest = json.loads((HARNESS_DIR / "package.json").read_text())
    vsix = out / "e2e-test-controller.vsix"
    identity = (
        f'<Identity Language="en-US" Id="{manifest["name"]}" Version="{manifest["version"]}" '
        f'Publisher="{manifest["publisher"]}"/>'
    )
    xml = (
        '<?xml version="1.0" encoding="utf-8"?>\n<PackageManifest Version="2.0.0" '
        'xmlns="http://schemas.microsoft.com/developer/vsx-schema/2011"><Metadata>'
        f"{identity}<DisplayName>{manifest['displayName']}</DisplayName></Metadata><Installation>"
        '<InstallationTarget Id="Microsoft.VisualStudio.Code"/></Installation><Dependencies/><Assets>'
        '<Asset Type="Microsoft.VisualStudio.Code.Manifest" Path="extension/package.json" '
        'Addressable="true"/>'
        "</Assets></PackageManifest>"
    )
    types = (
        '<?xml version="1.0" encoding="utf-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
        'content-types"><Default Extension=".js" ContentType="application/javascript"/><Default Extension='
        '".json" ContentType="application/json"/><Default Extension=".vsixmanifest" ContentType="text/xml"/>'
        "</Types>"
    )
    with zipfile.ZipFile(vsix, "w") as archive:
        archive.writestr("extension.vsixmanifest", xml)
        archive.writestr("[Content_Types].xml", types)
        for name in ("package.json", "extension.js"):
            archive.write(HARNESS_DIR / name, f"extension/{name}")
    return vsix


@contextmanager
def running_code_server(e2e_env: E2EEnv, run: Path) -> Iterator[CodeServer]:
    """A fresh code-server (own user data, extensions, HOME) with fixloop's .vsix and the harness."""
    for path, what in (
        (e2e_env.node, "Node 24"),
        (e2e_env.code_server_entry, "code-server"),
        (e2e_env.playwright_core, "playwright-core"),
        (e2e_env.chromium, "Chromium"),
    ):
        require(path, what)
    require(VSIX, "the fixloop .vsix (npm run package in client-vscode)")
    data, extensions = run / "data", run / "extensions"
    (data / "User").mkdir(parents=True)
    (data / "User" / "settings.json").write_text(json.dumps(USER_SETTINGS, indent=2))
    trace_file, log_file = run / "lsp-trace.log", run / "code-server.log"
    env = isolated_env(
        run / "home",
        EXTENSIONS_GALLERY="{}",  # no marketplace requests
        FIXLOOP_LSP_TRACE_FILE=str(trace_file),
        FIXLOOP_API_KEY="none",
        FIXLOOP_MODEL="scripted",
        FIXLOOP_MUTANTS="off",
        FIXLOOP_POOL_SHARE="0",
    )
    env["PATH"] = f"{e2e_env.node.parent}{os.pathsep}{SYSTEM_PATH}"
    env.pop("VIRTUAL_ENV", None)
    base = [str(e2e_env.node), str(e2e_env.code_server_entry), "--user-data-dir", str(data),
            "--extensions-dir", str(extensions)]  # fmt: skip
    for vsix in (VSIX, harness_vsix(run)):
        subprocess.run([*base, "--install-extension", str(vsix)], env=env, check=True, capture_output=True,
                       timeout=180)  # fmt: skip
    port = free_port()
    with log_file.open("w") as log:
        process = subprocess.Popen(
            [
                *base,
                "--bind-addr",
                f"127.0.0.1:{port}",
                "--auth",
                "none",
                "--disable-telemetry",
                "--disable-update-check",
                "--disable-workspace-trust",
                "--disable-getting-started-override",
                "--disable-proxy",
            ],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{url}/healthz", timeout=2).read()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"code-server did not start:\n{log_file.read_text()[-3000:]}")
                time.sleep(0.3)
        yield CodeServer(url, trace_file, log_file, data, extensions, e2e_env)
    finally:
        os.killpg(process.pid, 15)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)


def drive(server: CodeServer, scenario: str, project: Path, out: Path, **extra: Any) -> dict[str, Any]:
    """Run one drive.mjs scenario against `project`; fail with what the user saw when it does not pass."""
    config = {
        "url": server.url,
        "folder": str(project),
        "out": str(out),
        "playwrightCore": str(server.env.playwright_core),
        "chromium": str(server.env.chromium),
        "timeoutMs": 60_000,
        "testLine": FAILING_TEST_LINE + 2,  # 1-based line of the failing assert
        **extra,
    }
    config_file = out / f"{scenario}-config.json"
    config_file.write_text(json.dumps(config))
    started = time.monotonic()
    done = subprocess.run(
        [str(server.env.node), str(E2E_DIR / "vscode" / "drive.mjs"), scenario, str(config_file)],
        env=isolated_env(out / "browser-home"),  # Chromium writes crash reports and dconf under HOME
        capture_output=True,
        text=True,
        timeout=200,
    )
    result_file = out / f"{scenario}-result.json"
    if not result_file.exists():
        pytest.fail(f"drive.mjs exited {done.returncode} without a result:\n{done.stderr[-3000:]}")
    result = json.loads(result_file.read_text())
    result["wall_seconds"] = round(time.monotonic() - started, 1)
    result_file.write_text(json.dumps(result, indent=2))
    assert done.returncode == 0 and result["ok"], (
        f"{scenario} failed: {result['errors']}\ntoasts: {result['texts'].get('toastsAtFailure')}\n"
        f"screenshots: {result['screenshots']}\nserver log: {server.log_file}\ntrace: {server.trace_file}\n"
        f"fixloop log:\n{server.fixloop_log()[-3000:]}"
    )
    return result


def fixloop_source_hash() -> str:
    """The hash client-vscode/scripts/bundle_python.py records for the fixloop sources it bundled."""
    script = EXTENSION_DIR / "scripts" / "bundle_python.py"
    spec = importlib.util.spec_from_file_location("bundle_python", script)
    assert spec and spec.loader
    bundle_python = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bundle_python)
    return str(bundle_python.source_hash(REPO_ROOT / "server" / "fixloop"))


def require_fresh_bundle() -> dict[str, Any]:
    """bundled/bundle.json of the built .vsix, which must hold today's fixloop sources."""
    bundle_file = EXTENSION_DIR / "bundled" / "bundle.json"
    if not bundle_file.is_file():
        missing(f"{bundle_file} does not exist (npm run package in client-vscode)")
    bundle = json.loads(bundle_file.read_text())
    if bundle.get("sourceHash") != fixloop_source_hash():
        pytest.fail(
            "the .vsix bundles older fixloop sources than server/fixloop: run `bash scripts/setup-e2e.sh`"
        )
    return bundle


def python_without_fixloop(python: str) -> bool:
    done = subprocess.run([python, "-c", "import fixloop"], capture_output=True, env={"PATH": SYSTEM_PATH})
    return done.returncode != 0
