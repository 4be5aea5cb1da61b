"""search runs its regex in a child process: a pattern that backtracks without end is stopped at the time
limit with a message, and cancelling the search stops it at once."""

from __future__ import annotations

import asyncio

import pytest

from fixloop.tools import SearchTool, Workspace
from fixloop.tools.search import SearchError


@pytest.fixture
def project(tmp_path):
    (tmp_path / "big.txt").write_text("a" * 40 + "!\n")
    (tmp_path / "app.py").write_text("def hit():\n    return 1\n")
    return tmp_path


async def test_a_runaway_pattern_is_stopped_with_a_message(project):
    with pytest.raises(SearchError, match=r"stopped after 1 s.*backtracks"):
        await asyncio.wait_for(SearchTool(Workspace(project), time_limit=1).run(pattern="(a+)+$"), 30)


async def test_cancelling_a_runaway_search_stops_it(project):
    search = asyncio.ensure_future(SearchTool(Workspace(project), time_limit=60).run(pattern="(a+)+$"))
    await asyncio.sleep(0.3)
    search.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(search, 10)


async def test_an_ordinary_search_still_finds_its_lines(project):
    result = await SearchTool(Workspace(project)).run(pattern=r"def \w+\(")
    assert result.text == "app.py:1: def hit():"


async def test_an_invalid_or_huge_pattern_is_refused_before_searching(project):
    with pytest.raises(SearchError, match="invalid regular expression"):
        await SearchTool(Workspace(project)).run(pattern="(unclosed")
    with pytest.raises(SearchError, match="characters long"):
        await SearchTool(Workspace(project)).run(pattern="x" * 5000)
