"""fixloop's startup hook is a `sitecustomize` placed first on the path: the environment's own
sitecustomize (coverage's subprocess hook, a distribution's) still runs after it, in shadow runs."""

from __future__ import annotations

from pathlib import Path

from fixloop.pytest_runner import PytestRunner
from fixloop.pytest_runner.runner import ImportRedirect
from fixloop.shadow import ShadowWorkspace
from support import project_python, write_project


async def test_the_environments_own_sitecustomize_still_runs(tmp_path: Path) -> None:
    project = write_project(
        tmp_path / "project",
        {
            "tests/test_site.py": """
            import os


            def test_the_users_sitecustomize_ran():
                assert os.environ.get("USERS_SITECUSTOMIZE") == "ran"
            """,
        },
    )
    theirs = write_project(
        tmp_path / "site",
        {
            "sitecustomize.py": 'import os\nos.environ["USERS_SITECUSTOMIZE"] = "ran"\n',
        },
    )
    with ShadowWorkspace.create(project) as shadow:
        runner = PytestRunner(
            shadow.root,
            (project_python(), "-m", "pytest"),
            120,
            env={"PYTHONPATH": str(theirs)},
            redirect=ImportRedirect(shadow.real_top, shadow.top),
        )
        run = await runner.run(["tests/test_site.py"])
    assert run.passed_ids() == ["tests/test_site.py::test_the_users_sitecustomize_ran"], run.output
