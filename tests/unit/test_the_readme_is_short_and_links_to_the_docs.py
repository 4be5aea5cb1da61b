"""The README stays a five-minute read: at most 200 lines, the two commands first, every link resolving."""

from __future__ import annotations

import re
from pathlib import Path

from markdown.extensions.toc import slugify

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def anchors(page: Path) -> set[str]:
    """The heading anchors MkDocs gives a page (headings outside code blocks)."""
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    headings = re.findall(r"^#{1,6} (.+)$", text, re.MULTILINE)
    return {slugify(re.sub(r"[`*]", "", heading), "-") for heading in headings}


def test_the_readme_is_at_most_200_lines() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines: move detail into a page under docs/"


def test_the_two_commands_come_first() -> None:
    text = README.read_text(encoding="utf-8")
    first_block = FENCE.search(text)
    assert first_block is not None and text.index("\n## ") > first_block.start()
    commands = [line.split("#")[0].strip() for line in first_block.group(0).splitlines()[1:-1]]
    assert commands == ["scripts/demo.sh", "scripts/test.sh"]
    assert "the main job" in first_block.group(0) and "the whole test suite" in first_block.group(0)


def test_every_relative_link_of_the_readme_resolves() -> None:
    for target in LINK.findall(README.read_text(encoding="utf-8")):
        if target.startswith(("http://", "https://")):
            continue
        path, _, anchor = target.partition("#")
        assert (REPO / path).exists(), f"README.md links to {path}, which does not exist"
        if anchor:
            assert anchor in anchors(REPO / path), f"README.md links to {target}: no such heading"


def test_the_readme_links_every_page_of_the_docs() -> None:
    linked = {target.partition("#")[0] for target in LINK.findall(README.read_text(encoding="utf-8"))}
    pages = {f"docs/{p.name}" for p in (REPO / "docs").glob("*.md") if p.name != "index.md"}
    assert pages <= linked, f"not linked from the README: {sorted(pages - linked)}"
