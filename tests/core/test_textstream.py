"""TextStream: incremental text is final, never half a character, and cut before stop strings."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from agentjet.core.backends.textstream import TextStream, held_back_length

# A byte-level vocabulary like GPT-2's: every token is some bytes; text only exists once the
# bytes form whole UTF-8 characters.
_VOCAB: dict[int, bytes] = {
    0: b"Hello",
    1: b" wor",
    2: b"ld",
    3: b" E",
    4: b"ND",
    5: b" more",
    6: "é".encode()[:1],  # first byte of a two-byte character
    7: "é".encode()[1:],
    8: "🎉".encode()[:2],
    9: "🎉".encode()[2:],
    10: b"EN",
    11: b"X",
    12: b"<",
    13: b"/a>",
}


def _decode(ids: Sequence[int]) -> str:
    return b"".join(_VOCAB[i] for i in ids).decode("utf-8", errors="replace")


def _feed(stream: TextStream, ids: Sequence[int]) -> list[str]:
    return [stream.push(i) for i in ids]


def test_deltas_join_to_the_full_decoding_without_stops() -> None:
    ids = [0, 1, 2, 6, 7, 5, 8, 9, 2]
    stream = TextStream(_decode)
    text = "".join(_feed(stream, ids)) + stream.flush()
    assert text == _decode(ids) == "Hello worldé more🎉ld"
    assert stream.text == text


def test_a_split_character_is_held_until_complete() -> None:
    stream = TextStream(_decode)
    assert _feed(stream, [0, 8]) == ["Hello", ""]  # half an emoji: nothing yet, never "\ufffd"
    assert stream.push(9) == "🎉"


def test_flush_releases_an_incomplete_character_at_the_end() -> None:
    stream = TextStream(_decode)
    stream.push(6)
    assert stream.flush() == "\ufffd"


def test_stop_string_across_tokens_cuts_before_it() -> None:
    stream = TextStream(_decode, stop=("END",))
    deltas = _feed(stream, [0, 1, 3, 4, 5])
    assert "".join(deltas) == "Hello wor "
    assert deltas[2] == " "  # " E" could start "END": the "E" is held back
    assert stream.is_stopped
    assert deltas[4] == ""  # nothing after the stop
    assert stream.flush() == ""
    assert stream.text == "Hello wor "


def test_held_back_text_is_released_when_it_is_not_a_stop() -> None:
    stream = TextStream(_decode, stop=("ENDING",))
    assert _feed(stream, [0, 10]) == ["Hello", ""]
    assert stream.push(11) == "ENX"
    assert not stream.is_stopped


def test_held_back_prefix_of_a_stop_is_released_by_flush() -> None:
    stream = TextStream(_decode, stop=("</a>",))
    assert _feed(stream, [0, 12]) == ["Hello", ""]
    assert stream.flush() == "<"
    assert stream.text == "Hello<"


def test_the_earliest_of_several_stops_wins() -> None:
    stream = TextStream(_decode, stop=("more", "wor"))
    deltas = _feed(stream, [0, 1, 2, 5])
    assert "".join(deltas) == "Hello "
    assert stream.is_stopped


def test_a_stop_inside_one_token() -> None:
    stream = TextStream(_decode, stop=("ll",))
    assert stream.push(0) == "He"
    assert stream.is_stopped


@pytest.mark.parametrize(
    ("text", "stops", "expected"),
    [("abc", ("cd",), 1), ("abc", ("bcd", "cx"), 2), ("abc", ("xyz",), 0), ("abc", ("abc",), 0), ("", ("a",), 0)],
)
def test_held_back_length(text: str, stops: tuple[str, ...], expected: int) -> None:
    assert held_back_length(text, stops) == expected


def test_real_tokenizer_round_trip_with_multibyte_text() -> None:
    from transformers import AutoTokenizer

    from agentjet.core.models import resolve_model

    tokenizer = AutoTokenizer.from_pretrained(resolve_model("tiny"))
    original = "Héllo wörld 🎉 日本語のテキスト, naïve café ✓ done"
    ids = tokenizer.encode(original, add_special_tokens=False)
    stream = TextStream(lambda chunk: tokenizer.decode(list(chunk), skip_special_tokens=True))
    deltas = _feed(stream, ids)
    assert all("\ufffd" not in d for d in deltas)
    assert "".join(deltas) + stream.flush() == original
