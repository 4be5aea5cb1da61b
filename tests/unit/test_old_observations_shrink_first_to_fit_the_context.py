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


def test_an_observation_acted_on_is_folded_however_much_room_there_is():
    conversation = Conversation(budget_chars=1_000_000, keep_whole=3)
    conversation.add({"role": "system", "content": "rules"})
    report = "\n".join(
        [
            "1 failed, 4 passed in 0.52s",
            "",
            "FAILED tests/t.py::test_a",
            "  assert 1 == 2",
            "  at tests/t.py:3",
        ]
        + [f"  traceback line {n}" for n in range(80)]
    )
    conversation.add({"role": "user", "content": report}, observation=True)
    for n in range(3):
        conversation.add(
            {"role": "user", "content": "\n".join(f"read {n} line {j}" for j in range(200))}, observation=True
        )
    short = "x" * 300
    conversation.add({"role": "user", "content": short}, observation=True)  # the fourth from the end is short

    assert conversation.fit() == 2
    folded = conversation.messages[1]["content"]
    assert folded.startswith(SHRUNK_MARK) and "its verdict kept" in folded
    assert "1 failed, 4 passed in 0.52s" in folded and "FAILED tests/t.py::test_a" in folded
    assert "traceback line" not in folded
    read = conversation.messages[2]["content"]
    assert read.startswith(SHRUNK_MARK) and "lines hidden" in read and "read 0 line 0" in read
    assert all(not m["content"].startswith(SHRUNK_MARK) for m in conversation.messages[3:])
    assert conversation.fit() == 0  # folded once: the prefix is stable from the next turn on
