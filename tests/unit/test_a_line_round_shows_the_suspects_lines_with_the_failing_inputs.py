"""The line-level round's prompt: the suspects' lines numbered as in the file, the failing frames' lines,
and the failing test with its inputs."""

from __future__ import annotations

from fixloop.agent.line_round import LineSpot, function_lines, line_prompt, line_spot
from fixloop.agent.warm_start import ShownFunction
from fixloop.pytest_runner.failing_inputs import FailingInputs
from fixloop.pytest_runner.results import Frame, TestOutcome

SOURCE = (
    "RATE = 2\n"
    "\n"
    "class Shop:\n"
    "    def price(self, n):\n"
    "        def scaled(x):\n"
    "            return x + RATE\n"
    "        return scaled(n)\n"
    "\n"
    "def helper():\n"
    "    return 1\n"
)
FAILURE = TestOutcome(
    "tests/test_shop.py::test_price[3-6]",
    "failed",
    "AssertionError: assert 5 == 6",
    frames=(Frame("tests/test_shop.py", 5, "test_price"), Frame("shop.py", 9, "helper")),
    inputs=FailingInputs(params=(("n", "3"), ("expected", "6"))),
)


def test_methods_and_nested_functions_are_found_by_their_qualified_names() -> None:
    assert function_lines(SOURCE, "Shop.price") == range(4, 8)
    assert function_lines(SOURCE, "Shop.price.scaled") == range(5, 7)
    assert function_lines(SOURCE, "Shop") == range(0)
    assert function_lines("def (:", "f") == range(0)


def test_the_spot_holds_the_suspects_lines_and_the_failing_frames_in_that_file() -> None:
    spot = line_spot([ShownFunction("shop.py", "Shop.price")], [FAILURE], {"shop.py": SOURCE}.get)
    assert spot == LineSpot("shop.py", (4, 5, 6, 7, 9, 10))


def test_without_a_shown_function_the_innermost_code_frame_is_the_spot() -> None:
    spot = line_spot([], [FAILURE], {"shop.py": SOURCE}.get)
    assert spot is not None and spot.path == "shop.py" and 9 in spot.numbers
    assert line_spot([], [], {"shop.py": SOURCE}.get) is None


def test_the_prompt_numbers_the_lines_and_shows_the_failing_inputs() -> None:
    prompt = line_prompt(LineSpot("shop.py", (4, 5, 6, 7, 9)), SOURCE, [FAILURE])
    assert "6:             return x + RATE" in prompt
    assert "7:         return scaled(n)\n...\n9: def helper():" in prompt
    assert "test_price[3-6]: AssertionError: assert 5 == 6" in prompt
    assert "called with: n=3, expected=6" in prompt
    assert prompt.endswith("No explanation, no code fence.")
