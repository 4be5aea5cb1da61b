"""Localization uses the failing test's own calls and words: a near-tie in the spectrum ranking goes to the
function the test calls directly, or to one whose name and docstring say what the test's name says, and the
function the failing assertion calls is always among the suspects."""

from __future__ import annotations

from pathlib import Path

from fixloop.agent.localize import Suspect, find_suspects, module_names_read
from fixloop.pytest_runner import PytestRunner
from support import project_python, write_project

PYPROJECT = '[tool.pytest.ini_options]\npythonpath = ["."]\n'


async def _suspects(root: Path, target: str, limit: int, by_calls: bool) -> list[str]:
    runner = PytestRunner(root, (project_python(), "-m", "pytest"), 60, scratch=root.parent / "scratch")
    suspects, _run = await find_suspects(runner, root, [target], limit, by_calls=by_calls)
    return [f"{suspect.name} {suspect.score:.2f}" for suspect in suspects]


async def test_a_tie_goes_to_the_function_the_test_calls_directly(tmp_path: Path) -> None:
    # helper runs only through price: both are run by the failing test and one passing test (0.71 each);
    # the plain order puts the smaller helper first, the test calls price.
    root = write_project(
        tmp_path / "tie",
        {
            "pyproject.toml": PYPROJECT,
            "lib/__init__.py": "",
            "lib/aaa.py": "def helper(x):\n    return x + 1\n",
            "lib/zzz.py": (
                "from lib.aaa import helper\n\n\ndef price(x):\n"
                '    """The price."""\n    value = helper(x)\n    return value * 2\n'
            ),
            "tests/test_price.py": (
                "from lib.zzz import price\n\n\ndef test_price():\n    assert price(1) == 6\n\n\n"
                "def test_price_of_nothing():\n    assert price(-1) == 0\n"
            ),
        },
    )
    target = "tests/test_price.py::test_price"
    assert await _suspects(root, target, 5, by_calls=False) == ["helper 0.71", "price 0.71"]
    assert await _suspects(root, target, 5, by_calls=True) == ["price 0.71", "helper 0.71"]


async def test_a_tie_goes_to_the_function_named_for_what_the_test_checks(tmp_path: Path) -> None:
    # as the bench's shipping_quotes: every function is run by the failing test and both passing ones (0.58
    # each); by calls alone quote_order, which the test calls, comes first and the zone lookup three calls
    # down comes last, but the test's name is about the zone of a distance on a limit, and so is its docstring
    root = write_project(
        tmp_path / "ship",
        {
            "pyproject.toml": PYPROJECT,
            "ship.py": (
                "def zone_for_distance(km):\n"
                '    """The zone of a distance; a distance on a limit belongs to the nearer zone."""\n'
                "    return 1 if km <= 49 else 2\n\n\n"
                "def parcel_price(km):\n    return 5 * zone_for_distance(km)\n\n\n"
                "def quote_order(km):\n    return parcel_price(km) + 1\n"
            ),
            "tests/test_ship.py": (
                "from ship import quote_order\n\n\n"
                "def test_distance_on_a_zone_limit_uses_the_nearer_zone():\n"
                "    assert quote_order(50) == 6\n\n\n"
                "def test_near():\n    assert quote_order(10) == 6\n\n\n"
                "def test_far():\n    assert quote_order(90) == 11\n"
            ),
        },
    )
    target = "tests/test_ship.py::test_distance_on_a_zone_limit_uses_the_nearer_zone"
    assert await _suspects(root, target, 5, by_calls=True) == [
        "zone_for_distance 0.58",
        "quote_order 0.58",
        "parcel_price 0.58",
    ]


async def test_the_function_the_failing_assertion_calls_is_always_a_suspect(tmp_path: Path) -> None:
    # two helpers tie at 0.71; Cart.total, run by the passing tests too, scores 0.58 and would be cut
    root = write_project(
        tmp_path / "cart",
        {
            "pyproject.toml": PYPROJECT,
            "cart.py": (
                "def h1(x):\n    return x\n\n\ndef h2(x):\n    return x\n\n\n"
                "class Cart:\n    def total(self, x):\n        return x * 2\n"
            ),
            "tests/test_cart.py": (
                "from cart import Cart, h1, h2\n\n\n"
                "def test_total():\n    h1(1)\n    h2(1)\n    assert Cart().total(3) == 9\n\n\n"
                "def test_one():\n    h1(2)\n    assert Cart().total(0) == 0\n\n\n"
                "def test_two():\n    h2(2)\n    assert Cart().total(0) == 0\n"
            ),
        },
    )
    target = "tests/test_cart.py::test_total"
    assert await _suspects(root, target, 2, by_calls=False) == ["h1 0.71", "h2 0.71"]
    assert await _suspects(root, target, 2, by_calls=True) == ["h1 0.71", "Cart.total 0.58"]


def test_the_module_level_names_a_suspect_reads_are_suspects_too(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "words",
        {
            "words.py": (
                "import re\n\nPATTERN = re.compile(r'[a-z]+')\nLIMIT: int = 3\nUNUSED = 1\n\n\n"
                "def words(text):\n    return PATTERN.findall(text)[:LIMIT]\n"
            ),
        },
    )
    reader = Suspect("words.py", "words", 8, 9, 0.71, 1, 1)
    assert module_names_read(root, [reader]) == [
        Suspect("words.py", "LIMIT", 4, 4, 0.71, 1, 1),
        Suspect("words.py", "PATTERN", 3, 3, 0.71, 1, 1),
    ]
