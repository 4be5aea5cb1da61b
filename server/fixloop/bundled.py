"""The projects fixloop ships: the demo project and the bench's own cases, inside the package or the checkout.

A wheel carries them as package data in `fixloop/fixtures/` (copied from the repository's `fixtures/` by
the build hook in setup.py); a source checkout or an editable install reads `fixtures/` in place. Nothing
else is looked up in a source tree.
"""

from __future__ import annotations

from pathlib import Path

from fixloop.errors import ConfigError

_PACKAGED = Path(__file__).with_name("fixtures")
_CHECKOUT = Path(__file__).resolve().parents[2] / "fixtures"
# Folders of bench cases, relative to the fixtures folder: the fixture projects (each with its known fix in
# fixes/NAME.json) and the bench's own multi-file projects (each with a case.json).
CASE_FOLDERS = ("projects", "bench/projects")


def fixtures_root() -> Path:
    """The shipped fixtures: the wheel's package data, else the checkout's fixtures/ folder."""
    for candidate in (_PACKAGED, _CHECKOUT):
        if (candidate / "projects").is_dir():
            return candidate
    raise ConfigError(
        "this fixloop install carries no bundled projects (fixloop/fixtures is missing): "
        "install fixloop from its wheel or checkout (see the README's Install section)"
    )


def demo_project() -> Path:
    """The bundled demo project (a one-line factorial bug)."""
    return fixtures_root() / "projects" / "demo"


def bundled_case_folders() -> list[Path]:
    """The folders of the bench cases that ship with fixloop (what `fixloop bench` runs by default)."""
    root = fixtures_root()
    return [root / part for part in CASE_FOLDERS if (root / part).is_dir()]
