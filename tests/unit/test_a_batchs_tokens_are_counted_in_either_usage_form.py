"""A batch's (`n` choices) token counts from its stream: llama.cpp's server sends a usage after each choice's
finish, OpenAI one usage for the whole request at its end; either way the prompt is counted once, with
the first reply, and nothing reported is dropped."""

from __future__ import annotations

from types import SimpleNamespace as Chunk

from fixloop.model.replies import StreamedChoices

MESSAGES = [{"role": "user", "content": "x" * 400}]


def piece(index: int, text: str | None = None, finish: str | None = None) -> Chunk:
    delta = Chunk(content=text, refusal=None, tool_calls=None)
    return Chunk(choices=[Chunk(index=index, delta=delta, finish_reason=finish)], usage=None)


def usage(prompt: int, completion: int) -> Chunk:
    return Chunk(choices=[], usage=Chunk(prompt_tokens=prompt, completion_tokens=completion))


def streamed(chunks: list[Chunk], n: int = 2) -> list:
    choices = StreamedChoices(n)
    for chunk in chunks:
        choices.add(chunk)
    return choices.replies(MESSAGES, None)


def test_a_usage_after_each_choice_counts_each_completion_and_the_prompt_once() -> None:
    first, second = streamed(
        [
            piece(0, "a b"),
            piece(1, "c"),
            piece(1, finish="stop"),
            usage(500, 7),
            piece(0, finish="stop"),
            usage(500, 9),
        ]
    )
    assert (first.prompt_tokens, first.completion_tokens, first.estimated) == (500, 9, False)
    assert (second.prompt_tokens, second.completion_tokens, second.estimated) == (0, 7, False)


def test_one_usage_for_the_whole_request_keeps_its_prompt_when_the_last_to_finish_is_not_the_first() -> None:
    ends = [piece(0, finish="stop"), piece(1, finish="stop"), usage(500, 50)]
    first, second = streamed([piece(0, "abcd" * 10), piece(1, "abcd" * 30), *ends])
    assert first.prompt_tokens == 500 and second.prompt_tokens == 0  # reported, once
    assert first.completion_tokens + second.completion_tokens == 50  # the reported total
    assert first.completion_tokens == 10  # its own estimate (40 characters), the rest to the other


def test_a_batch_cut_before_any_usage_is_estimated() -> None:
    first, second = streamed([piece(0, "abcd" * 10), piece(1, "abcd")])
    assert first.estimated and second.estimated and first.prompt_tokens > 0 and second.prompt_tokens == 0


def test_the_replies_are_the_same_however_often_they_are_read() -> None:
    choices = StreamedChoices(2)
    for chunk in [piece(0, "abcd" * 10), piece(1, "abcd" * 30), piece(0, finish="stop")]:
        choices.add(chunk)
    for chunk in [piece(1, finish="stop"), usage(500, 50)]:
        choices.add(chunk)
    once, twice = choices.replies(MESSAGES, None), choices.replies(MESSAGES, None)
    assert once == twice and once[0].prompt_tokens == 500
    assert sum(reply.completion_tokens for reply in twice) == 50
