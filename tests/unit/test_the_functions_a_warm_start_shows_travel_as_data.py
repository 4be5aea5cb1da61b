"""The functions a warm start shows reach the sampled candidates as data, never re-read from its text."""

from __future__ import annotations

from fixloop.agent.edit_forms import focus_points
from fixloop.agent.warm_start import ShownFunction
from fixloop.agent.warm_start.snippets import Block, assemble

RATE = ShownFunction("shop/prices.py", "rate")
TOTAL = ShownFunction("shop/cart.py", "Cart.total")


def block(text: str, function: ShownFunction | None, section: str = "code") -> Block:
    return Block(text, label=text[:10], section=section, function=function)


def test_the_code_section_names_its_functions_in_the_order_shown() -> None:
    warm = assemble(
        [
            block("## failure", None, "evidence"),
            block("### shop/prices.py rate\n```python\ndef rate(): ...\n```", RATE),
            block(
                "### tests/test_cart.py the test", ShownFunction("tests/test_cart.py", "test_x"), "evidence"
            ),
            block("### shop/cart.py (lines 1-9) class Cart", None),
            block("### shop/cart.py Cart.total\n```python\ndef total(self): ...\n```", TOTAL),
        ],
        budget=6000,
    )
    assert warm.functions == (RATE, TOTAL)
    assert "def rate()" in warm.text


def test_a_function_left_out_for_space_is_not_pointed_at() -> None:
    warm = assemble([block("short", RATE), block("x" * 5000, TOTAL)], budget=1000)
    assert warm.functions == (RATE,)


def test_focus_points_name_each_function_once_and_keep_to_the_limit() -> None:
    functions = [RATE, TOTAL, RATE, *(ShownFunction("a.py", f"f{n}") for n in range(9))]
    points = focus_points(functions)
    assert points[:2] == ("`rate` in shop/prices.py", "`Cart.total` in shop/cart.py")
    assert len(points) == 5 and len(set(points)) == 5
    assert focus_points([]) == ()
