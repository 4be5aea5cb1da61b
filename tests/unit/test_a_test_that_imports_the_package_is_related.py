"""The gate's scope: a test module that imports the package whose code the target's module reaches is run
too, `from pkg import name` through the package's `__init__` included (a fix of `pkg/core.py` can break
it). Found live: a semver fix that broke 102 tests of test_bump.py was proposed, because test_bump.py
imports only `semver`."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixloop.verify.baseline import related_test_modules


def project(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


SRC_PACKAGE = {  # code in a module of a src/ package, re-exported by its __init__
    "src/pkg/__init__.py": "from pkg.core import compare, bump\n",
    "src/pkg/core.py": "def compare(a, b):\n    return 0\n\n\ndef bump(v):\n    return v\n",
    "src/pkg/cli.py": "from pkg.core import compare\n",
    "tests/test_cli.py": "from pkg.cli import compare\n",
    "tests/test_bump.py": "from pkg import bump\n",
    "tests/test_other.py": "import json\n",
}
ONE_MODULE_PACKAGE = {  # all the code in the package's __init__
    "tool/__init__.py": "def run():\n    return 1\n",
    "tests/test_run.py": "from tool import run\n",
    "tests/test_more.py": "import tool\n",
}


@pytest.mark.parametrize(
    ("files", "target", "related"),
    [
        (SRC_PACKAGE, "tests/test_cli.py", ["tests/test_bump.py"]),
        (ONE_MODULE_PACKAGE, "tests/test_run.py", ["tests/test_more.py"]),
    ],
    ids=["src-package", "one-module-package"],
)
def test_a_test_importing_the_package_init_is_related(
    tmp_path: Path, files: dict[str, str], target: str, related: list[str]
) -> None:
    assert related_test_modules(project(tmp_path, files), [target]) == related
