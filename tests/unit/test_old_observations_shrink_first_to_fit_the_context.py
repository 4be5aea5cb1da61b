"""The context budget: older observations shrink first, the last few stay whole, shrunk stays shrunk."""

from __future__ import annotations

from fixloop.agent.context import SHRUNK_MARK, Conversation


def _conversation(n: int, size: int = 3000) -> Conversation:
    conversation = Conversation(budget_chars=8000, keep_whole=3)
    conversation.add({"role": "system", "content": "rules"})
    conversation.add({"role": "user", "content": "task"})
    for i in range(n):
        conversation.add({"role": "assistant", "content": f"call {i}"})
        body = "\n".join(f"line {j} of observation {i}" for j in range(size // 25))
        conversation.add({"role": "user", "content": body}, observation=True)
    return conversation


def test_under_budget_nothing_changes():
    conversation = _conversation(2, size=1000)
    before = [dict(m) for m in conversation.messages]
    assert conversation.fit() == 0
    assert conversation.messages == before


def test_oldest_observations_shrink_first_and_the_last_three_stay_whole():
    conversation = _conversation(6)
    shrunk = conversation.fit()
    observations = [m["content"] for m in conversation.messages if m["role"] == "user"][1:]
    assert shrunk >= 1
    assert observations[0].startswith(SHRUNK_MARK)
    assert all(not text.startswith(SHRUNK_MARK) for text in observations[-3:])
    assert "lines hidden" in observations[0] and "observation 0" in observations[0]


def test_a_shrunk_prefix_is_stable_on_the_next_turn():
    conversation = _conversation(6)
    conversation.fit()
    snapshot = [m["content"] for m in conversation.messages]
    conversation.fit()
    assert [m["content"] for m in conversation.messages] == snapshot
    assert conversation.messages[0]["content"] == "rules"
