"""replace_function given a bare name that two methods share replaces the run's suspect (the toolbox gets
the suspects from the engine) and says which it chose; without suspects the first in the file."""

from __future__ import annotations

from pathlib import Path

from fixloop.tools import build_toolbox
from fixloop.tools.code_placement import PlacementHints
from fixloop.tools.workspace import Workspace

CARTS = (
    "class Cart:\n    def total(self):\n        return sum(self.prices)\n\n\n"
    "class Basket:\n    def total(self):\n        return sum(self.prices[1:])\n"
)
FIXED = "def total(self):\n    return sum(list(self.prices))\n"


async def _replace(root: Path, hints: PlacementHints | None) -> str:
    (root / "shop").mkdir()
    (root / "shop/carts.py").write_text(CARTS)
    toolbox = build_toolbox(Workspace(root), runner=None, hints=hints)
    arguments = {"path": "shop/carts.py", "name": "total", "code": FIXED}
    result = await toolbox.call("replace_function", arguments)
    assert not result.is_error, result.text
    return result.text


async def test_the_suspect_of_two_methods_of_one_name_is_replaced_and_the_choice_said(tmp_path: Path) -> None:
    text = await _replace(tmp_path, PlacementHints(suspects=("shop/carts.py::Basket.total",)))
    assert "replaced Basket.total, the suspect" in text
    assert (tmp_path / "shop/carts.py").read_text() == CARTS.replace("self.prices[1:]", "list(self.prices)")


async def test_without_suspects_the_first_in_the_file_is_replaced(tmp_path: Path) -> None:
    text = await _replace(tmp_path, None)
    assert "replaced Cart.total, the first in the file" in text
    assert "sum(self.prices[1:])" in (tmp_path / "shop/carts.py").read_text()
