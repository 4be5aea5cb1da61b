"""The documentation builds with MkDocs in strict mode: no broken link or anchor, no page outside the nav."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def config() -> dict:
    """mkdocs.yml, read with the YAML reader MkDocs brings."""
    assert importlib.util.find_spec("mkdocs"), "mkdocs is missing: pip install -e '.[dev]'"
    import yaml

    return yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))


def nav_pages() -> list[str]:
    return [page for item in config()["nav"] for page in item.values()]


def test_the_documentation_builds_strict_without_a_warning(tmp_path: Path) -> None:
    assert importlib.util.find_spec("mkdocs"), "mkdocs is missing: pip install -e '.[dev]'"
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", "mkdocs.yml", "-d", site],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "WARNING" not in output, output
    for page in nav_pages():
        built = site / ("index.html" if page == "index.md" else page.removesuffix(".md") + "/index.html")
        assert built.is_file(), f"{page} is in the nav but was not built"


def test_the_strict_settings_fail_a_broken_link_an_anchor_and_a_page_outside_the_nav() -> None:
    settings = config()
    assert settings["strict"] is True
    assert settings["validation"]["nav"]["omitted_files"] == "warn"
    assert settings["validation"]["links"]["not_found"] == "warn"
    assert settings["validation"]["links"]["anchors"] == "warn"


def test_every_page_under_docs_is_in_the_nav() -> None:
    pages = {p.relative_to(REPO / "docs").as_posix() for p in (REPO / "docs").rglob("*.md")}
    assert pages == set(nav_pages())
