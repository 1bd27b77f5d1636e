"""JSON with JavaScript's rules: number formatting, UTF-16 lengths, key order."""

from __future__ import annotations


import pytest
from hypothesis import given
from hypothesis import strategies as st

from pi_session.core.jsonio import dumps_line, dumps_pretty, js_len, js_number, js_stringify, loads


@pytest.mark.parametrize(
    "value, text",
    [
        (1.0, "1"),
        (-2.0, "-2"),
        (0.1, "0.1"),
        (1.5, "1.5"),
        (1e-7, "1e-7"),
        (0.000001, "0.000001"),
        (1.5e16, "15000000000000000"),
        (1e21, "1e+21"),
        (1.2345e22, "1.2345e+22"),
        (123456789.125, "123456789.125"),
        (-0.0000012, "-0.0000012"),
        (5e-324, "5e-324"),
        (float("nan"), "null"),
    ],
)
def test_js_number(value, text):
    assert js_number(value) == text


def test_js_stringify_is_compact_and_keeps_unicode():
    assert js_stringify({"a": [1, 2.0, "é😀"], "b": None, "c": True}) == '{"a":[1,2,"é😀"],"b":null,"c":true}'


def test_integer_like_keys_come_first_like_javascript_objects():
    assert js_stringify({"b": 1, "10": 2, "2": 3, "01": 4}) == '{"2":3,"10":2,"b":1,"01":4}'


def test_js_len_counts_utf16_code_units():
    assert js_len("abc") == 3
    assert js_len("é") == 1
    assert js_len("😀") == 2
    assert js_len("a😀b🎉") == 6


@given(st.text())
def test_js_len_matches_utf16_encoding(text):
    try:
        expected = len(text.encode("utf-16-le", errors="surrogatepass")) // 2
    except UnicodeEncodeError:
        return
    assert js_len(text) == expected


def test_dumps_pretty_matches_json_stringify_indent_1():
    value = {"a": [], "b": {}, "c": [1, {"d": 2.5, "e": "x"}]}
    assert dumps_pretty(value) == '{\n "a": [],\n "b": {},\n "c": [\n  1,\n  {\n   "d": 2.5,\n   "e": "x"\n  }\n ]\n}'


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=20,
)


def _as_floats(value):
    """Numbers as floats: JavaScript has only doubles (1.0 is written 1)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, list):
        return [_as_floats(v) for v in value]
    return {k: _as_floats(v) for k, v in value.items()}


@given(json_values)
def test_round_trip(value):
    assert _as_floats(loads(js_stringify(value))) == _as_floats(value)
    assert loads(dumps_line(value)) == loads(js_stringify(value))
    assert dumps_line(value).endswith(b"\n")


def test_loads_accepts_what_json_parse_accepts():
    assert loads('"\\ud800"') == "\ud800"  # lone surrogate escape
    assert loads("123456789012345678901234567890") == 1.2345678901234568e29  # a double, as in JavaScript
    with pytest.raises(ValueError):
        loads("{bad")


def test_lone_surrogates_are_escaped_like_json_stringify():
    line = dumps_line({"a": "x\ud800y"})
    assert line == b'{"a":"x\\ud800y"}\n'
    line.decode("utf-8")  # valid UTF-8
    assert loads(line) == {"a": "x\ud800y"}
    assert js_stringify(["\udc00"]) == '["\\udc00"]'


def test_integers_beyond_2_53_print_as_javascript_prints_them_but_files_keep_every_digit():
    """JSON.parse makes doubles of big integers, so pi's outputs show them
    rounded; our outputs match, while file writes (rewrites, copies) keep
    the digits that were read."""
    from pi_session.core.jsonio import dumps_line, dumps_pretty, js_int, js_stringify

    value = {"a": 9007199254740993, "b": 123456789012345678901234567890, "c": -9007199254740993, "d": 10**400, "e": [2**53, 1.5]}
    # node: JSON.stringify(JSON.parse(<the same text>))
    assert js_stringify(value) == '{"a":9007199254740992,"b":1.2345678901234568e+29,"c":-9007199254740992,"d":null,"e":[9007199254740992,1.5]}'
    assert dumps_pretty({"x": 2**60}) == '{\n "x": 1152921504606847000\n}'
    assert js_int(2**53) == "9007199254740992" and js_int(10**21) == "1e+21"
    line = dumps_line(value)
    assert b'"a":9007199254740993' in line and b'"b":123456789012345678901234567890' in line and line.endswith(b"\n")
    assert loads(line) == value


_number_text = st.sampled_from(["1.0", "0.25", "1e-7", "-0.0", "12", "[1.5]", ':2.0,', '{"0":1}', ',"7":', "9007199254740993"])
_js_floats = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1.0, 1e16, 1e21, 1.5e300, 1e-7, 5e-324, 0.011963099999999999, 123456789.125]),
)
_js_ints = st.one_of(st.integers(-(2**63), 2**63 - 1), st.sampled_from([2**53, 2**53 + 1, -(2**53) - 1, 10**21, 0]))
_js_texts = st.one_of(st.text(max_size=12), _number_text, st.text(alphabet="0123456789.,:[]{}\"e-", max_size=10))
_js_keys = st.one_of(st.text(max_size=6), st.sampled_from(["0", "1", "10", "01", "4294967295", "4294967294", "-1", "1.5"]))
_js_values = st.recursive(
    st.one_of(st.none(), st.booleans(), _js_ints, _js_floats, _js_texts),
    lambda children: st.one_of(st.lists(children, max_size=5), st.dictionaries(_js_keys, children, max_size=5)),
    max_leaves=30,
)


@given(st.one_of(st.dictionaries(_js_keys, _js_values, max_size=6), st.lists(_js_values, max_size=6), _js_values))
def test_fast_encoding_equals_the_javascript_encoder(value):
    """``dumps_line`` and ``js_stringify`` take orjson's text when a scan of
    it finds nothing JavaScript writes differently (``jsonio._orjson_as_js``);
    they must give exactly what the JavaScript-rules encoder (the slow way,
    written after ``JSON.stringify``) gives, number-like text in strings,
    array-index keys, integral and huge floats and long integers included."""
    from pi_session.core.jsonio import js_stringify_by_rules

    assert dumps_line(value) == (js_stringify_by_rules(value, exact_ints=True) + "\n").encode("utf-8")
    assert js_stringify(value) == js_stringify_by_rules(value)


@given(st.one_of(st.dictionaries(_js_keys, _js_values, max_size=6), st.lists(_js_values, max_size=6), _js_values), st.sampled_from(["x", "1.0, ", '"1":']))
def test_fast_encoding_of_long_records_equals_the_javascript_encoder(value, filler):
    """The same for records whose text is long (a tool output): those are
    walked before their text is scanned, with the same answer; number-like
    and key-like text in the long string included."""
    from pi_session.core.jsonio import js_stringify_by_rules

    record = {"output": filler * 3000, "value": value, "list": [value, filler * 10]}
    assert dumps_line(record) == (js_stringify_by_rules(record, exact_ints=True) + "\n").encode("utf-8")
    assert js_stringify(record) == js_stringify_by_rules(record)
