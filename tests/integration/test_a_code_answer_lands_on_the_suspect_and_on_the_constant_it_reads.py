"""A code answer lands where the bug is: two methods of one name are told apart by the run's suspects (the
choice said in the progress), and a module-level constant the suspect reads is shown in the warm start and
replaced by an answer that carries it."""

from __future__ import annotations

from pathlib import Path

from fixloop.events import Notice, Verdict

CODES = {
    "shop/__init__.py": "",
    "shop/codes.py": (
        '"""Product codes."""\n\nimport re\n\nCODE = re.compile(r"^[A-Z]{3}$")\n\n\n'
        "def is_code(text):\n    return bool(CODE.match(text))\n"
    ),
    "conftest.py": "",
    "tests/test_codes.py": (
        "from shop.codes import is_code\n\n\n"
        'def test_three_letters():\n    assert is_code("ABC")\n\n\n'
        'def test_two_letters():\n    assert is_code("AB")\n'
    ),
}
TOTALS = {
    "shop/__init__.py": "",
    "shop/carts.py": (
        '"""Carts."""\n\n\nclass Cart:\n    def __init__(self, prices):\n        self.prices = prices\n\n'
        "    def total(self):\n        return sum(self.prices)\n\n\n"
        "class Basket:\n    def __init__(self, prices):\n        self.prices = prices\n\n"
        "    def total(self):\n        return sum(self.prices[1:])\n"
    ),
    "conftest.py": "",
    "tests/test_carts.py": (
        "from shop.carts import Basket, Cart\n\n\n"
        "def test_cart_total():\n    assert Cart([1, 2]).total() == 3\n\n\n"
        "def test_basket_total():\n    assert Basket([1, 2]).total() == 3\n"
    ),
}
CONSTANT_ANSWER = (
    'The pattern is too strict.\n\nshop/codes.py\n```python\nCODE = re.compile(r"^[A-Z]{2,3}$")\n```\n'
)
METHOD_ANSWER = "shop/carts.py\n```python\n    def total(self):\n        return sum(self.prices)\n```\n"


def project(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


async def test_the_constant_a_suspect_reads_is_shown_and_an_answer_replacing_it_is_verified(
    run_fix, tmp_path: Path
) -> None:
    shown = ["CODE, a module-level assignment the suspects read", 'CODE = re.compile(r"^[A-Z]{3}$")']
    script = [{"content": CONSTANT_ANSWER, "expect": {"messages_contain": shown}}]
    root = project(tmp_path / "codes", CODES)
    outcome = await run_fix(root, script, ["tests/test_codes.py::test_two_letters"], editForm="code")

    assert outcome.server.failures == [], outcome.notices
    assert outcome.result.status == "fixed", outcome.notices
    assert '+CODE = re.compile(r"^[A-Z]{2,3}$")' in outcome.result.diff
    assert [v.accepted for v in outcome.of(Verdict)] == [True]


async def test_of_two_methods_of_one_name_the_suspect_is_replaced_and_the_choice_is_said(
    run_fix, tmp_path: Path
) -> None:
    root = project(tmp_path / "carts", TOTALS)
    outcome = await run_fix(
        root, [{"content": METHOD_ANSWER}], ["tests/test_carts.py::test_basket_total"], editForm="code"
    )

    assert outcome.server.failures == [], outcome.notices
    assert outcome.result.status == "fixed", outcome.notices
    assert "-        return sum(self.prices[1:])" in outcome.result.diff
    placed = [e.text for e in outcome.of(Notice) if e.kind == "placement"]
    assert placed and "replaced Basket.total, the suspect" in placed[0], outcome.notices


async def test_with_code_answer_placement_off_the_constant_is_neither_shown_nor_replaced(
    run_fix, tmp_path: Path
) -> None:
    edit = {"path": "shop/codes.py", "old_text": "{3}", "new_text": "{2,3}"}
    script = [
        {"content": CONSTANT_ANSWER, "expect": {"messages_not_contain": "a module-level assignment"}},
        {
            "content": "Editing.",
            "tool_calls": [{"name": "edit_file", "arguments": edit}],
            "expect": {"last_message_contains": "could not be applied"},
        },
        {"content": "Done.", "tool_calls": [{"name": "submit", "arguments": {"summary": "two letters"}}]},
    ]
    root = project(tmp_path / "codes", CODES)
    target = ["tests/test_codes.py::test_two_letters"]
    outcome = await run_fix(root, script, target, editForm="code", codeAnswerPlacement=False)

    assert outcome.server.failures == [], outcome.notices
    assert outcome.result.status == "fixed", outcome.notices
    assert [v.accepted for v in outcome.of(Verdict)] == [True]  # the code answer was never judged
