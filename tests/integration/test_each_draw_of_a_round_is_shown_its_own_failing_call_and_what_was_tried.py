"""Diversity you can see: the sampled draws of one round are not the same prompt at another temperature;
each is pointed at its own failing call (when several targets fail), told which fixes were tried and
failed, and at a suspect; `drawVariety: false` leaves the failing call and the tried fixes out."""

from __future__ import annotations

HEAD = (
    "def slugify(title: str) -> str:\n"
    '    """Lower-case words joined by hyphens: \'Hello, World!\' -> \'hello-world\'."""\n'
    '    slug = re.sub(r"[^a-z0-9]+", "-", title.lower())\n'
)


def slugify(ending: str) -> str:
    return f"blog/slugs.py\n```python\n{HEAD}    {ending}\n```\n"


SAMPLE = {"strategy": "sample", "editForm": "code", "sampleParallel": 1, "sampleRounds": 0, "temperature": 0}
SCRIPT = [
    {"content": slugify('return slug.strip("_ ")')},  # the best guess: rejected
    {"content": slugify('return slug.strip(" ")')},  # asked for with n=2, one given: rejected
    {"content": slugify('return slug.strip("-")')},  # the third, drawn alone: verified
]
URL_CALL = (
    'failing line (tests/test_urls.py:5): assert post_url(7, "  Why Python? ") == "/posts/7/why-python"'
)
SLUG_CALL = 'failing line (tests/test_slugs.py:9): assert slugify("Hello, World!") == "hello-world"'
TRIED = "Tried and failed (write a different fix):"


async def test_two_draws_of_a_round_are_shown_different_calls_and_the_fix_tried_before(run_fix) -> None:
    outcome = await run_fix("two_failures", SCRIPT, samples=3, **SAMPLE)

    assert outcome.server.failures == [], outcome.notices
    assert outcome.result.status == "fixed", outcome.notices
    best, second, third = (request["messages"] for request in outcome.server.requests)
    assert best[:-1] == second[:-1] == third[:-1]  # the cached prefix is shared
    asks = [messages[-1]["content"] for messages in (best, second, third)]
    assert all(ask.startswith(asks[0]) for ask in asks)  # each draw's hints come after the round's ask
    hints = [ask[len(asks[0]) :] for ask in asks]
    assert hints[0] == ""  # the best guess is drawn from the round's prompt as it is
    assert URL_CALL in hints[1] and SLUG_CALL not in hints[1]
    assert SLUG_CALL in hints[2] and URL_CALL not in hints[2]
    assert TRIED in hints[1] and 'slug.strip("_ ")' in hints[1]  # the best guess, rejected before
    assert TRIED in hints[2] and 'slug.strip("_ ")' in hints[2]
    assert "Hint: the bug may well be in" in hints[2]  # drawn alone: pointed at a suspect too
    figures = [text for text in outcome.notices if text.startswith("round 1:")]
    assert figures and "3 distinct" in figures[0]


async def test_without_draw_variety_the_draws_show_no_call_and_no_tried_fix(run_fix) -> None:
    outcome = await run_fix("two_failures", SCRIPT, samples=3, drawVariety=False, **SAMPLE)

    assert outcome.result.status == "fixed", outcome.notices
    best, second, third = (request["messages"][-1]["content"] for request in outcome.server.requests)
    assert second == best and third.startswith(best)
    assert URL_CALL not in third[len(best) :] and TRIED not in third
