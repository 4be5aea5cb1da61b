"""Projects set up by the real tools at test time (venv + pip, uv, poetry, hatchling, flit, pdm-backend…).

Each is a git repository (the user's workspace folder) holding a small word-statistics library whose
`words()` splits on single spaces, so `test_word_count_ignores_repeated_whitespace` fails; the fix is the
one-line change WORDS_BUG -> WORDS_FIX. Nothing tells pytest where the package lives (no `pythonpath`):
the tests import it through the editable install the tool made, exactly as a real user's set-up does.
Built once per test session (see `ProjectBuilder`); pip and uv keep their usual caches.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from built_once import build_key, built_once
from support import commit_all

HOME_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")  # before tests patch it
WORDS_BUG = 'return [word.lower() for word in text.split(" ")]'
WORDS_FIX = "return [word.lower() for word in text.split()]"
TARGET = "test_word_count_ignores_repeated_whitespace"
BUILD_TIMEOUT = 600
# The set-ups are kept between runs (built_once) while this file, the helpers it builds with and the
# interpreter stay the same; pytest, uv and poetry come from PyPI at their newest when first built.
BUILD_KEY = build_key(
    Path(__file__), Path(__file__).with_name("built_once.py"), Path(__file__).with_name("support.py")
)


@dataclass(frozen=True)
class ToolMadeProject:
    """One set-up: where it is, which test fails, what fixes it, and which interpreter fixloop must pick."""

    name: str
    workspace: Path  # the folder the user opens (--root, the LSP workspace folder)
    project: Path  # the project holding the failing test (its pytest root)
    test_id: str  # relative to the workspace folder
    words_file: str  # the file to fix, relative to the project
    python: Path  # the interpreter fixloop must run the tests with
    reason: str  # what fixloop must say about why it picked it
    package: str  # a package the tests import from the user's files when nothing redirects them
    env: dict[str, str] = field(default_factory=dict)  # extra environment fixloop needs (tools on PATH)
    settings: dict[str, object] = field(default_factory=dict)  # client settings this set-up needs

    @property
    def project_test_id(self) -> str:
        """The test id relative to the project (what the model's tools see)."""
        prefix = self.project.relative_to(self.workspace).as_posix()
        return self.test_id if prefix == "." else self.test_id[len(prefix) + 1 :]

    def edits(self) -> list[dict[str, str]]:
        return [{"path": self.words_file, "old_text": WORDS_BUG, "new_text": WORDS_FIX}]


def words_sources(package: str) -> dict[str, str]:
    """The library's modules, relative to the package folder, for a package importable as `package`."""
    return {
        "__init__.py": f'''
            """Word statistics for plain text."""

            from {package}.counting import most_common, word_count

            __all__ = ["most_common", "word_count"]
            ''',
        "words.py": f'''
            """Splitting text into words."""


            def words(text: str) -> list[str]:
                """The words of text, lower-cased, split on any run of whitespace."""
                {WORDS_BUG}
            ''',
        "counting.py": f'''
            """Counting words."""

            from collections import Counter

            from {package}.words import words


            def word_count(text: str) -> int:
                """How many words text has."""
                return len(words(text))


            def most_common(text: str) -> str:
                """The most frequent word (the first one seen on ties)."""
                return Counter(words(text)).most_common(1)[0][0]
            ''',
    }


def test_source(package: str) -> str:
    return f"""
        from {package} import most_common, word_count


        def test_word_count_simple():
            assert word_count("a b c") == 3


        def {TARGET}():
            assert word_count("the  quick  brown\\tfox\\n") == 4


        def test_most_common_ignores_case():
            assert most_common("Tea or tea or TEA") == "tea"
        """


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")


def library(root: Path, package_dir: str, package: str, tests_dir: str = "tests") -> None:
    """The library's modules under `package_dir` and its test module under `tests_dir` (no __init__.py)."""
    write(root, {f"{package_dir}/{rel}": text for rel, text in words_sources(package).items()})
    write(root, {f"{tests_dir}/test_counting.py": test_source(package)})


def venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


class ProjectBuilder:
    """Builds each set-up once per test run, on first use, shared by the run's xdist workers (built_once);
    the tools (uv, poetry) go into one tools venv."""

    def __init__(self, tmp_path_factory: pytest.TempPathFactory) -> None:
        self.factory = tmp_path_factory
        self.built: dict[str, ToolMadeProject] = {}
        self._tools: Path | None = None
        self._tools_error = ""

    # -- running the tools ------------------------------------------------------------------------

    def env(self, **extra: str) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH", "PYTEST_DISABLE_PLUGIN_AUTOLOAD")
            and not k.startswith(("FIXLOOP_", "PIP_PYTHON", "UV_", "POETRY_"))
        }
        env["XDG_CACHE_HOME"] = str(HOME_CACHE)
        env.update(extra)
        return env

    def run(self, *args: str | Path, cwd: Path, **extra: str) -> str:
        done = subprocess.run(
            [str(a) for a in args],
            cwd=cwd,
            env=self.env(**extra),
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(map(str, args))} failed in {cwd}:\n{done.stdout}\n{done.stderr}")
        return done.stdout

    def venv(self, where: Path, *, with_pip: bool = False) -> Path:
        """`python -m venv` (without pip unless asked: pip then runs from outside with --python)."""
        options = [] if with_pip else ["--without-pip"]
        self.run(sys.executable, "-m", "venv", *options, where, cwd=where.parent)
        return venv_python(where)

    def pip(self, python: Path, *args: str, cwd: Path) -> None:
        """`pip install` into `python`'s environment (pip ≥ 22.3 installs into another interpreter)."""
        self.run(
            sys.executable,
            "-m",
            "pip",
            "--python",
            python,
            "install",
            "-q",
            "--disable-pip-version-check",
            *args,
            cwd=cwd,
        )

    @property
    def tools(self) -> Path:
        """The bin folder of a venv holding uv and poetry, installed from PyPI once per session."""
        if self._tools_error:
            pytest.skip(self._tools_error)
        if self._tools is None:

            def build(venv: Path) -> None:
                self.pip(self.venv(venv), "uv", "poetry", cwd=venv.parent)

            try:
                venv = built_once(self.factory, "tool-made-tools-venv", build, key=BUILD_KEY)
            except RuntimeError as error:  # uv and poetry are used "where installable"
                self._tools_error = f"uv and poetry are not installable from PyPI here: {str(error)[-500:]}"
                pytest.skip(self._tools_error)
            self._tools = venv_python(venv).parent
        return self._tools

    @staticmethod
    def git_commit(root: Path) -> None:
        commit_all(root)

    # -- the set-ups ------------------------------------------------------------------------------

    def get(self, name: str) -> ToolMadeProject:
        if name not in self.built:

            def build(folder: Path) -> None:
                made = {**BUILDERS, **PITFALLS}[name](self, folder)
                folder.with_name(f"{folder.name}.pickle").write_bytes(pickle.dumps(made))

            folder = built_once(
                self.factory, f"tool-made-{name}", build, key=BUILD_KEY, still_good=_as_committed
            )
            self.built[name] = pickle.loads(folder.with_name(f"{folder.name}.pickle").read_bytes())
        return self.built[name]


def _as_committed(folder: Path) -> bool:
    """Whether every repository of a kept set-up is as its build committed it (tests must not change it)."""
    repos = [git.parent for pattern in (".git", "*/.git", "*/*/.git") for git in folder.glob(pattern)]
    for repo in repos:
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=all"],
            cwd=repo,
            capture_output=True,
            text=True,
            check=False,
        )
        if status.returncode != 0 or status.stdout:
            return False
    return bool(repos) and folder.with_name(f"{folder.name}.pickle").is_file()


GITIGNORE = ".venv/\nvenv/\n*.egg-info/\n__pycache__/\nbuild/\ndist/\n"


def setuptools_src(b: ProjectBuilder, root: Path) -> ToolMadeProject:
    """The issue's reproduction: src layout, setuptools, `python -m venv .venv && .venv/bin/pip install
    pytest -e .` (setuptools ≥ 64 makes a static .pth for a src layout), no `pythonpath` setting."""
    write(
        root,
        {
            "pyproject.toml": """
        [build-system]
        requires = ["setuptools>=64"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "textstats"
        version = "0.1.0"
        requires-python = ">=3.11"

        [tool.pytest.ini_options]
        testpaths = ["tests"]
        """,
            ".gitignore": GITIGNORE,
        },
    )
    library(root, "src/textstats", "textstats")
    python = b.venv(root / ".venv", with_pip=True)
    b.run(
        python.parent / "pip", "install", "-q", "--disable-pip-version-check", "pytest", "-e", ".", cwd=root
    )
    b.git_commit(root)
    return ToolMadeProject(
        "setuptools_src",
        root,
        root,
        f"tests/test_counting.py::{TARGET}",
        "src/textstats/words.py",
        python,
        "the project's .venv",
        "textstats",
    )


def setuptools_compat(b: ProjectBuilder, root: Path) -> ToolMadeProject:
    """setuptools' compat editable mode (a .pth path entry), the package in a subfolder (lib/python), pytest
    configured in tox.ini, the environment in venv/ (not .venv)."""
    write(
        root,
        {
            "pyproject.toml": """
        [build-system]
        requires = ["setuptools>=64"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "textstats"
        version = "0.1.0"

        [tool.setuptools.packages.find]
        where = ["lib/python"]
        """,
            "tox.ini": """
        [tox]
        env_list = py

        [pytest]
        testpaths = tests
        """,
            ".gitignore": GITIGNORE,
        },
    )
    library(root, "lib/python/textstats", "textstats")
    python = b.venv(root / "venv")
    b.pip(python, "pytest", "-e", ".", "--config-settings", "editable_mode=compat", cwd=root)
    b.git_commit(root)
    return ToolMadeProject(
        "setuptools_compat",
        root,
        root,
        f"tests/test_counting.py::{TARGET}",
        "lib/python/textstats/words.py",
        python,
        "the project's venv",
        "textstats",
    )


def setuptools_strict(b: ProjectBuilder, root: Path) -> ToolMadeProject:
    """setuptools' strict editable mode: a link tree in build/__editable__.* (ignored by git) whose links
    point at the user's files, put on sys.path by a .pth."""
    write(
        root,
        {
            "pyproject.toml": """
        [build-system]
        requires = ["setuptools>=64"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "textstats"
        version = "0.1.0"

        [tool.pytest.ini_options]
        testpaths = ["tests"]
        """,
            ".gitignore": GITIGNORE,
        },
    )
    library(root, "src/textstats", "textstats")
    python = b.venv(root / ".venv")
    b.pip(python, "pytest", "-e", ".", "--config-settings", "editable_mode=strict", cwd=root)
    b.git_commit(root)
    return ToolMadeProject(
        "setuptools_strict",
        root,
        root,
        f"tests/test_counting.py::{TARGET}",
        "src/textstats/words.py",
        python,
        "the project's .venv",
        "textstats",
    )


def setuptools_namespace(b: ProjectBuilder, root: Path) -> ToolMadeProject:
    """setuptools ≥ 64's editable finder (MAPPING and NAMESPACES in __editable___*_finder.py): a namespace
    package `acme` whose `acme.textstats` lives in a subfolder; pytest configured in setup.cfg."""
    write(
        root,
        {
            "pyproject.toml": """
        [build-system]
        requires = ["setuptools>=64"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "acme-textstats"
        version = "0.1.0"

        [tool.setuptools]
        package-dir = {"acme.textstats" = "lib/acme/textstats"}
        packages = ["acme.textstats"]
        """,
            "setup.cfg": """
        [tool:pytest]
        testpaths = tests
        """,
            ".gitignore": GITIGNORE,
        },
    )
    library(root, "lib/acme/textstats", "acme.textstats")
    python = b.venv(root / ".venv")
    b.pip(python, "pytest", "-e", ".", cwd=root)
    b.git_commit(root)
    return ToolMadeProject(
        "setuptools_namespace",
        root,
        root,
        f"tests/test_counting.py::{TARGET}",
        "lib/acme/textstats/words.py",
        python,
        "the project's .venv",
        "acme.textstats",
    )


def hatchling_src(b: ProjectBuilder, root: Path) -> ToolMadeProject:
    """hatchling, src layout: its editable wheel is a `_textstats.pth` path entry."""
    write(
        root,
        {
            "pyproject.toml": """
        [build-system]
        requires = ["hatchling"]
        build-backend = "hatchling.build"

        [project]
        name = "textstats"
        version = "0.1.0"

        [tool.hatch.build.targets.wheel]
        packages = ["src/textstats"]

        [tool.pytest.ini_options]
        testpaths = ["tests"]
        """,
            ".gitignore": GITIGNORE,
        },
    )
    library(root, "src/textstats", "textstats")
    python = b.venv(root / ".venv")
    b.pip(python, "pytest", "-e", ".", cwd=root)
    b.git_commit(root)
    return ToolMadeProject(
        "hatchling_src",
        root,
        root,
        f"tests/test_counting.py::{TARGET}",
        "src/textstats/words.py",
        python,
        "the project's .venv",
        "textstats",
    )


def hatchling_exact(b: ProjectBuilder, root: Path) -> ToolMadeProject:
    """hatchling's `dev-mode-exact`: the `editables` redirector (a finder with a path table)."""
    write(
        root,
        {
            "pyproject.toml": """
        [build-system]
        requires = ["hatchling"]
        build-backend = "hatchling.build"

        [project]
        name = "textstats"
        version = "0.1.0"

        [tool.hatch.build]
        dev-mode-exact = true

        [tool.hatch.build.targets.wheel]
        packages = ["src/textstats"]

        [tool.pytest.ini_options]
        testpaths = ["tests"]
        """,
            ".gitignore": GITIGNORE,
        },
    )
    library(root, "src/textstats", "textstats")
    python = b.venv(root / ".venv")
    b.pip(python, "pytest", "-e", ".", cwd=root)
    b.git_commit(root)
    return ToolMadeProject(
        "hatchling_exact",
        root,
        root,
        f"tests/test_counting.py::{TARGET}",
        "src/textstats/words.py",
        python,
        "the project's .venv",
        "textstats",
    )


def flit_module(b: ProjectBuilder, root: Path) -> ToolMadeProject:
    """flit_core, src layout: `pip install -e .` writes a .pth path entry."""
    write(
        root,
        {
            "pyproject.toml": """
        [build-system]
        requires = ["flit_core>=3.4,<4"]
        build-backend = "flit_core.buildapi"

        [project]
        name = "textstats"
        version = "0.1.0"
        description = "Word statistics for plain text."

        [tool.pytest.ini_options]
        testpaths = ["tests"]
        """,
            ".gitignore": GITIGNORE,
        },
    )
    library(root, "src/textstats", "textstats")
    python = b.venv(root / ".venv")
    b.pip(python, "pytest", "-e", ".", cwd=root)
    b.git_commit(root)
    return ToolMadeProject(
        "flit_module",
        root,
        root,
        f"tests/test_counting.py::{TARGET}",
        "src/textstats/words.py",
        python,
        "the project's .venv",
        "textstats",
    )


def pdm_backend(b: ProjectBuilder, root: Path) -> ToolMadeProject:
    """pdm-backend, src layout: its editable wheel is a .pth path entry."""
    write(
        root,
        {
            "pyproject.toml": """
        [build-system]
        requires = ["pdm-backend"]
        build-backend = "pdm.backend"

        [project]
        name = "textstats"
        version = "0.1.0"

        [tool.pytest.ini_options]
        testpaths = ["tests"]
        """,
            ".gitignore": GITIGNORE,
        },
    )
    library(root, "src/textstats", "textstats")
    python = b.venv(root / ".venv")
    b.pip(python, "pytest", "-e", ".", cwd=root)
    b.git_commit(root)
    return ToolMadeProject(
        "pdm_backend",
        root,
        root,
        f"tests/test_counting.py::{TARGET}",
        "src/textstats/words.py",
        python,
        "the project's .venv",
        "textstats",
    )


def uv_project(b: ProjectBuilder, root: Path) -> ToolMadeProject:
    """`uv init --lib` then `uv add --dev pytest`: uv's own build backend, .venv without pip, uv.lock."""
    root.rmdir()
    b.run(
        b.tools / "uv",
        "init",
        "--lib",
        "--name",
        "textstats",
        "--no-workspace",
        "--python",
        sys.executable,
        root,
        cwd=root.parent,
    )
    library(root, "src/textstats", "textstats")
    write(
        root,
        {
            "pyproject.toml": (root / "pyproject.toml").read_text()
            + """
        [tool.pytest.ini_options]
        testpaths = ["tests"]
        """
        },
    )
    b.run(b.tools / "uv", "add", "--dev", "pytest", "--python", sys.executable, cwd=root)
    b.git_commit(root)
    return ToolMadeProject(
        "uv_project",
        root,
        root,
        f"tests/test_counting.py::{TARGET}",
        "src/textstats/words.py",
        venv_python(root / ".venv"),
        "the project's .venv",
        "textstats",
    )


def poetry_project(b: ProjectBuilder, root: Path) -> ToolMadeProject:
    """`poetry install` with the environment outside the project (poetry's default): only `poetry env info`
    knows where it is, so fixloop must ask poetry (on PATH)."""
    write(
        root,
        {
            "pyproject.toml": """
        [project]
        name = "textstats"
        version = "0.1.0"
        requires-python = ">=3.11"
        dependencies = []

        [tool.poetry]
        packages = [{ include = "textstats", from = "src" }]

        [tool.poetry.group.dev.dependencies]
        pytest = ">=8"

        [build-system]
        requires = ["poetry-core>=2.0"]
        build-backend = "poetry.core.masonry.api"

        [tool.pytest.ini_options]
        testpaths = ["tests"]
        """,
            ".gitignore": GITIGNORE,
        },
    )
    library(root, "src/textstats", "textstats")
    envs = root.parent / f"{root.name}-poetry-envs"  # outside the project, as poetry keeps them
    poetry_env = {
        "POETRY_VIRTUALENVS_PATH": str(envs),
        "POETRY_VIRTUALENVS_IN_PROJECT": "false",
        "POETRY_NO_INTERACTION": "1",
    }
    b.run(b.tools / "poetry", "env", "use", sys.executable, cwd=root, **poetry_env)
    b.run(b.tools / "poetry", "install", cwd=root, **poetry_env)
    venv = Path(b.run(b.tools / "poetry", "env", "info", "--path", cwd=root, **poetry_env).strip())
    b.git_commit(root)
    path = os.pathsep.join([str(b.tools), os.environ.get("PATH", "")])
    return ToolMadeProject(
        "poetry_project",
        root,
        root,
        f"tests/test_counting.py::{TARGET}",
        "src/textstats/words.py",
        venv_python(venv),
        "poetry's environment",
        "textstats",
        env={"PATH": path, **poetry_env},
    )


def monorepo(b: ProjectBuilder, root: Path) -> ToolMadeProject:
    """A monorepo (one git repository, one .venv at its top) with two packages installed editable:
    `packages/core` (src layout) and `packages/app` (flat), whose tests import both; the failing test is in
    app, a pytest root of its own below the workspace folder, with a conftest.py that puts a helpers folder
    on sys.path and no __init__.py in its tests."""
    write(
        root,
        {
            "README.md": "Two packages.\n",
            ".gitignore": GITIGNORE,
            "packages/core/pyproject.toml": """
        [build-system]
        requires = ["setuptools>=64"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "core"
        version = "0.1.0"
        """,
            "packages/core/src/core/__init__.py": '''
        """Text helpers shared by the packages."""


        def lower(word: str) -> str:
            return word.lower()
        ''',
            "packages/app/pyproject.toml": """
        [build-system]
        requires = ["setuptools>=64"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "app"
        version = "0.1.0"
        dependencies = ["core"]

        [tool.setuptools]
        packages = ["app"]

        [tool.pytest.ini_options]
        testpaths = ["tests"]
        """,
            "packages/app/tests/conftest.py": """
        import os
        import sys

        sys.path.insert(0, os.path.join(os.path.dirname(__file__), "helpers"))
        """,
            "packages/app/tests/helpers/sample_texts.py": """
        SPACED = "the  quick  brown\\tfox\\n"
        """,
        },
    )
    library(root / "packages/app", "app", "app")
    init = root / "packages/app/app/__init__.py"
    init.write_text(init.read_text() + "\nimport core  # the shared helpers, from the sibling package\n")
    test = root / "packages/app/tests/test_counting.py"
    test.write_text(
        "from sample_texts import SPACED\n"
        + test.read_text().replace('"the  quick  brown\\tfox\\n"', "SPACED")
    )
    python = b.venv(root / ".venv")
    b.pip(python, "pytest", "-e", "packages/core", "-e", "packages/app", cwd=root)
    b.git_commit(root)
    return ToolMadeProject(
        "monorepo",
        root,
        root / "packages/app",
        f"packages/app/tests/test_counting.py::{TARGET}",
        "app/words.py",
        python,
        "the .venv of the workspace folder",
        "core",
    )


def xdist_randomly(b: ProjectBuilder, root: Path) -> ToolMadeProject:
    """pytest-xdist with `-n auto` in pytest.ini's addopts, and pytest-randomly installed (both autoload)."""
    write(
        root,
        {
            "pyproject.toml": """
        [build-system]
        requires = ["setuptools>=64"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "textstats"
        version = "0.1.0"
        """,
            "pytest.ini": """
        [pytest]
        addopts = -n auto
        testpaths = tests
        """,
            ".gitignore": GITIGNORE,
        },
    )
    library(root, "src/textstats", "textstats")
    python = b.venv(root / ".venv")
    b.pip(python, "pytest", "pytest-xdist", "pytest-randomly", "-e", ".", cwd=root)
    b.git_commit(root)
    return ToolMadeProject(
        "xdist_randomly",
        root,
        root,
        f"tests/test_counting.py::{TARGET}",
        "src/textstats/words.py",
        python,
        "the project's .venv",
        "textstats",
    )


def multi_root(b: ProjectBuilder, root: Path) -> ToolMadeProject:
    """Two workspace folders, `alpha` and `beta`, each a setuptools project with the same test ids. alpha
    has its .venv; beta's environment lives outside it (envs/beta) and reaches fixloop only through the
    `python` setting of that folder. The returned project is beta; alpha is beside it."""
    for name in ("alpha", "beta"):
        folder = root / name
        write(
            folder,
            {
                "pyproject.toml": f"""
            [build-system]
            requires = ["setuptools>=64"]
            build-backend = "setuptools.build_meta"

            [project]
            name = "textstats-{name}"
            version = "0.1.0"

            [tool.setuptools.packages.find]
            where = ["src"]

            [tool.pytest.ini_options]
            testpaths = ["tests"]
            """,
                ".gitignore": GITIGNORE,
            },
        )
        library(folder, "src/textstats", "textstats")
        venv = folder / ".venv" if name == "alpha" else root / "envs" / name
        venv.parent.mkdir(parents=True, exist_ok=True)
        python = b.venv(venv)
        b.pip(python, "pytest", "-e", ".", cwd=folder)
        b.git_commit(folder)
    return ToolMadeProject(
        "multi_root",
        root / "beta",
        root / "beta",
        f"tests/test_counting.py::{TARGET}",
        "src/textstats/words.py",
        python,
        "the python setting",
        "textstats",
        settings={"python": str(python)},
    )


def setuptools_scm(b: ProjectBuilder, root: Path) -> ToolMadeProject:
    """setuptools-scm writes the package's version file at install time; git ignores it and the package
    imports it, so the shadow needs it although the repository does not hold it."""
    write(
        root,
        {
            "pyproject.toml": """
        [build-system]
        requires = ["setuptools>=64", "setuptools-scm>=8"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "textstats"
        dynamic = ["version"]

        [tool.setuptools_scm]
        version_file = "src/textstats/_version.py"

        [tool.pytest.ini_options]
        testpaths = ["tests"]
        """,
            ".gitignore": GITIGNORE + "src/textstats/_version.py\n",
        },
    )
    library(root, "src/textstats", "textstats")
    init = root / "src/textstats/__init__.py"
    init.write_text(init.read_text() + "from textstats._version import version as __version__\n")
    b.git_commit(root)  # setuptools-scm reads the version from git
    python = b.venv(root / ".venv")
    b.pip(python, "pytest", "-e", ".", cwd=root)
    assert (root / "src/textstats/_version.py").is_file()
    return ToolMadeProject(
        "setuptools_scm",
        root,
        root,
        f"tests/test_counting.py::{TARGET}",
        "src/textstats/words.py",
        python,
        "the project's .venv",
        "textstats",
    )


BUILDERS: dict[str, Callable[[ProjectBuilder, Path], ToolMadeProject]] = {
    "setuptools_src": setuptools_src,
    "setuptools_compat": setuptools_compat,
    "setuptools_namespace": setuptools_namespace,
    "setuptools_scm": setuptools_scm,
    "setuptools_strict": setuptools_strict,
    "hatchling_src": hatchling_src,
    "hatchling_exact": hatchling_exact,
    "flit_module": flit_module,
    "pdm_backend": pdm_backend,
    "uv_project": uv_project,
    "poetry_project": poetry_project,
    "monorepo": monorepo,
    "xdist_randomly": xdist_randomly,
    "multi_root": multi_root,
}


def fix_turns(made: ToolMadeProject) -> list[dict[str, object]]:
    """A scripted model that reads the words module, fixes it, runs the target test and submits."""
    (edit,) = made.edits()
    return [
        {
            "content": f"The failure points into {made.words_file}; let me read it.",
            "tool_calls": [{"name": "read_file", "arguments": {"path": made.words_file}}],
        },
        {
            "content": "words() splits on single spaces; split on any whitespace instead.",
            "tool_calls": [{"name": "edit_file", "arguments": edit}],
        },
        {
            "content": "Now let me run the failing test.",
            "tool_calls": [{"name": "run_tests", "arguments": {"test_ids": [made.project_test_id]}}],
        },
        {
            "content": "The test passes.",
            "tool_calls": [{"name": "submit", "arguments": {"summary": "words() splits on any whitespace"}}],
        },
    ]


def installed_copy(b: ProjectBuilder, root: Path) -> ToolMadeProject:
    """`pip install .` without -e: the tests import an installed copy, which no fix to src/ can reach."""
    write(
        root,
        {
            "pyproject.toml": """
        [build-system]
        requires = ["setuptools>=64"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "textstats"
        version = "0.1.0"
        """,
            ".gitignore": GITIGNORE,
        },
    )
    library(root, "src/textstats", "textstats")
    python = b.venv(root / ".venv")
    b.pip(python, "pytest", ".", cwd=root)
    b.git_commit(root)
    return ToolMadeProject(
        "installed_copy",
        root,
        root,
        f"tests/test_counting.py::{TARGET}",
        "src/textstats/words.py",
        python,
        "the project's .venv",
        "textstats",
    )


PITFALLS: dict[str, Callable[[ProjectBuilder, Path], ToolMadeProject]] = {
    "installed_copy": installed_copy,  # set-ups fixloop cannot fix, and says why
}
