"""RFC 6901 JSON Pointer, used by the ``evidence.raw_path`` rule."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from diagnosis_server.gatekeeper.pointer import PointerError, parse, resolve
from tests.support.pointers import pointed

# The example document of RFC 6901, section 5.
RFC_DOC: Any = {
    "foo": ["bar", "baz"],
    "": 0,
    "a/b": 1,
    "c%d": 2,
    "e^f": 3,
    "g|h": 4,
    "i\\j": 5,
    'k"l': 6,
    " ": 7,
    "m~n": 8,
}


@pytest.mark.parametrize(
    ("pointer", "expected"),
    [
        ("", RFC_DOC),
        ("/foo", ["bar", "baz"]),
        ("/foo/0", "bar"),
        ("/", 0),
        ("/a~1b", 1),
        ("/c%d", 2),
        ("/e^f", 3),
        ("/g|h", 4),
        ("/i\\j", 5),
        ('/k"l', 6),
        ("/ ", 7),
        ("/m~0n", 8),
    ],
)
def test_rfc_6901_examples(pointer: str, expected: Any) -> None:
    assert resolve(RFC_DOC, pointer) == expected


def test_empty_pointer_is_the_whole_document() -> None:
    assert resolve(503, "") == 503
    assert resolve(None, "") is None


def test_escapes_are_decoded_tilde_one_first() -> None:
    doc: Any = {"~1": "tilde-one", "/": "slash", "~": "tilde"}
    # "~01" must decode to "~1" (not "/"): ~1 is replaced before ~0.
    assert resolve(doc, "/~01") == "tilde-one"
    assert resolve(doc, "/~1") == "slash"
    assert resolve(doc, "/~0") == "tilde"
    assert parse("/a~1b/~0~1") == ("a/b", "~/")


@pytest.mark.parametrize("pointer", ["/~", "/a~2", "/~a", "/x/~"])
def test_invalid_escapes_are_rejected(pointer: str) -> None:
    with pytest.raises(PointerError, match="'~' must be followed"):
        resolve({"~": 1}, pointer)


@pytest.mark.parametrize("pointer", ["foo", "#/foo", " /foo"])
def test_pointer_must_start_with_slash(pointer: str) -> None:
    with pytest.raises(PointerError, match="must be empty or start with '/'"):
        resolve(RFC_DOC, pointer)


@pytest.mark.parametrize(
    ("pointer", "message"),
    [
        ("/foo/01", "'01' is not an array index"),
        ("/foo/00", "'00' is not an array index"),
        ("/foo/-1", "'-1' is not an array index"),
        ("/foo/+1", "'+1' is not an array index"),
        ("/foo/1.0", "'1.0' is not an array index"),
        ("/foo/ 1", "' 1' is not an array index"),
        ("/foo/١", "is not an array index"),
        ("/foo/-", "'-' refers to no existing array element"),
        ("/foo/2", "index 2 is out of range"),
        ("/foo/bar", "'bar' is not an array index"),
    ],
)
def test_array_indexes_are_strict(pointer: str, message: str) -> None:
    with pytest.raises(PointerError, match=re.escape(message)):
        resolve(RFC_DOC, pointer)


@pytest.mark.parametrize(
    ("doc", "pointer", "message"),
    [
        ({"a": 1}, "/b", "at the document root: no member 'b'"),
        ({"a": {"b": 1}}, "/a/c", "at '/a': no member 'c'"),
        ({"a": {"b": 1}}, "/a/b/c", "at '/a/b': cannot take 'c' of a int"),
        ({"a": "text"}, "/a/0", "cannot take '0' of a str"),
        ({"a": None}, "/a/x", "cannot take 'x' of a null"),
        ({"0": "key"}, "/0", None),
    ],
)
def test_keys_on_non_objects_and_missing_members_fail(doc: Any, pointer: str, message: str | None) -> None:
    if message is None:
        assert resolve(doc, pointer) == "key"  # "0" is a member name in an object, not an index
        return
    with pytest.raises(PointerError) as info:
        resolve(doc, pointer)
    assert message in str(info.value)


def test_pointer_error_is_a_value_error() -> None:
    assert issubclass(PointerError, ValueError)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4),
    max_leaves=20,
)


@given(json_values)
def test_every_escaped_path_resolves_to_its_value(doc: Any) -> None:
    for pointer, value in pointed(doc):
        assert resolve(doc, pointer) == value
