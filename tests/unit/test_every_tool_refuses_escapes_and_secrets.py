"""Every tool that takes a path refuses escapes and secrets, and nothing outside the project is touched."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fixloop.tools import build_toolbox
from fixloop.tools.workspace import Workspace

ESCAPES = [
    "../outside.txt",
    "/etc/hostname",
    "link/outside.txt",
    "out.txt",
    ".git/config",
    ".env",
    "keys/id_ed25519",
    "deploy/cert.pem",
    "x\x00y",
]


def calls(path: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("read_file", {"path": path}),
        ("list_files", {"path": path}),
        ("search", {"pattern": "secret", "path": path}),
        ("edit_file", {"path": path, "old_text": "secret", "new_text": "public"}),
        ("edit_file", {"path": path, "old_text": "", "new_text": "created"}),
        ("write_file", {"path": path, "content": "overwritten"}),
    ]


@pytest.mark.parametrize("path", ESCAPES)
async def test_every_path_tool_refuses(tmp_path: Path, path: str) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "outside.txt").write_text("secret")
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "config").write_text("secret")
    (root / ".env").write_text("secret")
    (root / "keys").mkdir()
    (root / "keys" / "id_ed25519").write_text("secret")
    (root / "deploy").mkdir()
    (root / "deploy" / "cert.pem").write_text("secret")
    (root / "link").symlink_to(outside)
    (root / "out.txt").symlink_to(outside / "outside.txt")
    toolbox = build_toolbox(Workspace(root), runner=None)
    for name, arguments in calls(path):
        result = await toolbox.call(name, arguments)
        assert result.is_error, (name, path, result.text)
        assert "secret" not in result.text.replace("secret or credential", ""), (name, path, result.text)
        assert len(result.text.splitlines()) == 1, result.text
    assert (outside / "outside.txt").read_text() == "secret"
    assert sorted(p.name for p in outside.iterdir()) == ["outside.txt"]
    assert not (tmp_path / "outside.txt").exists()
    for rel in (".git/config", ".env", "keys/id_ed25519", "deploy/cert.pem"):
        assert (root / rel).read_text() == "secret"
