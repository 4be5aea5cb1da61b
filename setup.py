"""Build hook: the wheel carries the projects fixloop ships (the demo, the bench's own cases) as package data.

fixtures/ at the repository root stays the one copy in git; building a wheel copies the folders named in
SHIPPED into fixloop/fixtures/ inside it, where `fixloop.bundled` finds them. An editable install reads
fixtures/ in place instead. Everything else about the build lives in pyproject.toml.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

FIXTURES = Path(__file__).resolve().parent / "fixtures"
# The fixture projects with their known fixes (a bench case each), and the bench's own projects with the
# hidden checks their case.json names (bench/hidden/NAME, outside each project).
SHIPPED = ("projects", "fixes", "bench/projects", "bench/fixes", "bench/hidden", "bench/subsets")
SKIPPED = shutil.ignore_patterns("__pycache__", ".pytest_cache", "*.pyc", ".venv")


class BuildWithFixtures(build_py):
    """build_py, then the shipped fixture folders copied to fixloop/fixtures/ in the build folder."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib) / "fixloop" / "fixtures"
        shutil.rmtree(target, ignore_errors=True)
        for part in SHIPPED:
            source = FIXTURES / part
            if not source.is_dir():
                raise SystemExit(f"setup.py: {source} is missing; build from a fixloop checkout or its sdist")
            shutil.copytree(source, target / part, ignore=SKIPPED)


setup(cmdclass={"build_py": BuildWithFixtures})
