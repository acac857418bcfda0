"""The shared validators: choices from Literal aliases, ints that are not bools, name lists."""

from __future__ import annotations

from typing import Literal

import pytest
from hypothesis import given, strategies as st

from harness import UsageError
from harness._names import close_matches, did_you_mean, format_names
from harness._validation import (
    check_choice,
    check_int,
    choice_problem,
    choices_of,
    int_problem,
    is_int,
    is_number,
)
from harness.loop import UnknownToolPolicy

Color = Literal["red", "green", "blue"]


def test_choices_come_from_the_literal_alias() -> None:
    assert choices_of(Color) == ("red", "green", "blue")
    assert choices_of(UnknownToolPolicy) == ("error_result", "raise")
    assert choices_of(Literal["a"] | Literal["b"]) == ("a", "b")
    with pytest.raises(TypeError, match="not a Literal of strings"):
        choices_of(int)


def test_check_choice_names_the_value_the_choices_and_the_closest() -> None:
    assert check_choice("red", Color, name="color") == "red"
    with pytest.raises(UsageError) as info:
        check_choice("gren", Color, name="color")
    assert str(info.value) == (
        "color must be one of 'red', 'green', 'blue', got 'gren' (did you mean 'green'?)"
    )
    with pytest.raises(ValueError, match=r"got 3$"):
        check_choice(3, Color, name="color", error=ValueError)
    assert choice_problem("blue", Color, name="color") is None


@pytest.mark.parametrize("bad", [True, False, 1.0, "3", None])
def test_check_int_refuses_bools_and_non_ints(bad: object) -> None:
    with pytest.raises(UsageError, match=f"n must be an int, got {bad!r}"):
        check_int(bad, name="n")


def test_check_int_minimum() -> None:
    assert check_int(3, name="n", minimum=3) == 3
    assert int_problem(2, name="n", minimum=3) == "n must be an int >= 3, got 2"
    assert is_int(0) and not is_int(True) and not is_int(-1, minimum=0)
    assert is_number(1.5) and is_number(2) and not is_number(False)


def test_format_names_is_the_one_shortened_list() -> None:
    assert format_names([]) == "(none)"
    assert format_names(["a", "b"]) == "'a', 'b'"
    assert format_names(["a", "b"], quote=False) == "a, b"
    names = [f"t{i}" for i in range(25)]
    assert format_names(names, quote=False).endswith("t19 and 5 more")
    assert format_names(names, limit=2, quote=False) == "t0, t1 and 23 more"


def test_close_matches_and_did_you_mean() -> None:
    assert close_matches("serch", ["search", "list", "Search"]) == ["search"]
    assert close_matches("SEARCH_X", ["search_x"]) == ["search_x"]  # case-insensitive
    assert did_you_mean("recordmode", ["record_mode", "match_on"]) == (
        " (did you mean 'record_mode'?)"
    )
    assert did_you_mean("zzz", ["record_mode"]) == ""


@given(names=st.lists(st.text(min_size=1, max_size=8), max_size=40), limit=st.integers(1, 30))
def test_format_names_shows_at_most_limit_and_counts_the_rest(names: list[str], limit: int) -> None:
    text = format_names(names, limit=limit)
    hidden = len(names) - limit
    if hidden > 0:
        assert text.endswith(f" and {hidden} more")
    else:
        assert " more" not in text or any(" more" in n for n in names)
    for name in names[:limit]:
        assert repr(name) in text
