"""The GitHub workflows under .github/workflows/ validate against GitHub's workflow schema (the copy that
check-jsonschema ships), pin every action to a commit, start with no permissions, and zizmor (offline)
finds nothing of high severity in them."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support import REPO_ROOT

WORKFLOWS = sorted((REPO_ROOT / ".github" / "workflows").glob("*.yml"))
SCRIPTS = Path(sys.executable).parent  # the dev extra puts both tools next to the interpreter


def tool(name: str) -> str:
    found = shutil.which(name, path=str(SCRIPTS)) or shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is missing: pip install -e '.[dev]'")
    return found


def test_there_are_the_ci_and_the_release_workflows():
    assert {path.name for path in WORKFLOWS} >= {"ci.yml", "release.yml"}


def test_every_workflow_matches_githubs_schema():
    command = [tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows", *map(str, WORKFLOWS)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_action_is_pinned_to_a_commit_and_permissions_start_empty():
    for path in WORKFLOWS:
        text = path.read_text()
        assert re.search(r"^permissions: \{\}$", text, re.M), f"{path.name}: no top-level `permissions: {{}}`"
        for action in re.findall(r"uses: (\S+)", text):
            assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", action), (
                f"{path.name}: {action} is not pinned"
            )


def test_zizmor_finds_nothing_of_high_severity():
    command = [tool("zizmor"), "--offline", "--format", "json", str(REPO_ROOT / ".github" / "workflows")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    findings = json.loads(done.stdout or "[]")
    high = [
        f"{finding['ident']}: {finding['desc']}"
        for finding in findings
        if finding["determinations"]["severity"] == "High"
    ]
    assert not high, high
