"""Model-visible names: validation, sanitising and deterministic shortening."""

import re

import pytest
from hypothesis import given, settings, strategies as st

from harness._errors import InvalidToolName, UsageError
from harness.tools import is_valid_name, make_name, sanitize_part, validate_name

_RULE = re.compile(r"[a-zA-Z0-9_-]{1,64}")


@pytest.mark.parametrize("name", ["a", "get_weather", "A-b_9", "x" * 64, "-_-"])
def test_valid_names(name: str) -> None:
    assert is_valid_name(name)
    assert validate_name(name) == name


@pytest.mark.parametrize(
    "name",
    ["", "x" * 65, "has space", "dot.name", "naïve", "slash/name", "trailing\n", "\nleading"],
)
def test_invalid_names_are_rejected_with_the_rule(name: str) -> None:
    assert not is_valid_name(name)
    with pytest.raises(InvalidToolName) as info:
        validate_name(name)
    assert isinstance(info.value, UsageError)
    assert info.value.name == name
    message = str(info.value)
    assert repr(name) in message
    assert "^[a-zA-Z0-9_-]{1,64}$" in message


def test_non_string_name_is_invalid() -> None:
    assert not is_valid_name(123)  # type: ignore[arg-type]
    with pytest.raises(InvalidToolName, match="'123'"):
        validate_name(123)  # type: ignore[arg-type]


def test_sanitize_part_keeps_letters_digits_underscores() -> None:
    assert sanitize_part("c-123") == "c123"
    assert sanitize_part("a.b c/d_e") == "abcd_e"
    assert sanitize_part("ünïcode") == "ncode"


def test_make_name_joins_sanitised_parts() -> None:
    assert make_name("customer", "c-123", "get_average_spend") == "customer_c123_get_average_spend"
    assert make_name("a", "", "--", "b") == "a_b"


def test_make_name_with_nothing_left_raises() -> None:
    with pytest.raises(InvalidToolName, match="'--'"):
        make_name("-", "-")


def test_long_names_are_shortened_deterministically() -> None:
    parts = ("customer", "x" * 80, "get_average_spend")
    name = make_name(*parts)
    assert len(name) == 64
    assert is_valid_name(name)
    assert name == make_name(*parts)
    assert re.fullmatch(r"customer_x+_[0-9a-f]{8}", name)
    assert make_name("a" * 64) == "a" * 64  # exactly 64 is not shortened


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.text(min_size=1, max_size=40), min_size=1, max_size=5),
    st.lists(st.text(min_size=1, max_size=40), min_size=1, max_size=5),
)
def test_make_name_is_valid_and_distinct(a: list[str], b: list[str]) -> None:
    full_a = "_".join(p for p in map(sanitize_part, a) if p)
    full_b = "_".join(p for p in map(sanitize_part, b) if p)
    if not full_a:
        with pytest.raises(InvalidToolName):
            make_name(*a)
        return
    name_a = make_name(*a)
    assert _RULE.fullmatch(name_a)
    assert name_a == make_name(*a)
    if full_b and full_a != full_b:
        assert name_a != make_name(*b)


@settings(max_examples=50, deadline=None)
@given(st.text(alphabet="abc_", min_size=65, max_size=120), st.text(alphabet="abc_", max_size=5))
def test_distinct_long_names_stay_distinct(base: str, suffix: str) -> None:
    # names that share their first 55 characters still differ after shortening
    other = base + suffix + "z"
    assert make_name(base) != make_name(other)
    assert len(make_name(other)) <= 64


def test_match_names_is_exact_or_glob_and_case_sensitive() -> None:
    from harness.tools import match_names

    names = ["customer_c123_get", "customer_c456_get", "Customer_X_get", "search"]
    assert match_names("search", names) == ["search"]
    assert match_names("customer_*_get", names) == ["customer_c123_get", "customer_c456_get"]
    assert match_names("SEARCH", names) == []
    assert match_names("nothing*", names) == []
