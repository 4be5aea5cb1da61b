"""The architecture page maps the tree as it is: its module map is what the generator writes, and every
module the page names exists."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "server" / "fixloop"
DOCS = REPO / "docs"
PACKAGES = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
# A code span naming a module or folder of the package: `agent/loop.py`, `lsp/handlers/`, `config.py`.
REGENERATE = "python scripts/architecture.py"
MODULE = re.compile(r"`((?:server/)?(?:fixloop/)?[a-z_]+(?:/[a-z_*]+)*(?:\.py|/))`")


def generator():
    spec = importlib.util.spec_from_file_location("architecture", REPO / "scripts" / "architecture.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_module_map_is_what_the_generator_writes() -> None:
    architecture = generator()
    page = architecture.PAGE.read_text(encoding="utf-8")
    assert page == architecture.page_with(architecture.render(), page), (
        f"docs/architecture.md is out of date with the tree: run `{REGENERATE}` and commit the page"
    )


def test_every_module_of_the_package_is_on_the_page() -> None:
    page = (DOCS / "architecture.md").read_text(encoding="utf-8")
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).as_posix()
        shown = rel.removesuffix("__init__.py") if rel.endswith("/__init__.py") else rel
        assert f"`{shown}`" in page, f"{rel} is not on docs/architecture.md: run `{REGENERATE}`"


def names_a_module(span: str) -> bool:
    parts = span.removeprefix("server/").removeprefix("fixloop/").split("/")
    return (
        span.startswith(("server/", "fixloop/"))
        or parts[0] in PACKAGES
        or (len(parts) == 1 and (PACKAGE / parts[0]).is_file())
    )


def test_every_module_the_pages_name_exists() -> None:
    for page in [REPO / "README.md", *DOCS.glob("*.md")]:
        for span in MODULE.findall(page.read_text(encoding="utf-8")):
            if not names_a_module(span):
                continue
            rel = span.removeprefix("server/").removeprefix("fixloop/").rstrip("/")
            missing = f"{page.name} names `{span}`, which is not in server/fixloop/"
            assert not rel or list(PACKAGE.glob(rel)), missing
