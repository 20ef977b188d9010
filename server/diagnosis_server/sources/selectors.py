"""The selector languages recorded packs understand: a PromQL series selector, a LogQL stream selector with
line filters, and Kubernetes label and field selectors. Pure functions; a query outside the subset is a
``ToolError`` that says what a pack can answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from diagnosis_server.tools.base import ToolError

_IDENT = r"[a-zA-Z_][a-zA-Z0-9_]*"
_STRING = r'"(?:[^"\\]|\\.)*"|`[^`]*`'
_MATCHER = re.compile(rf"\s*({_IDENT})\s*(=~|!~|!=|=)\s*({_STRING})\s*(,|$)")
# (one run of whitespace between the name and the end whatever the braces: two would backtrack quadratically)
_METRIC = re.compile(r"^\s*([a-zA-Z_:][a-zA-Z0-9_:]*)?\s*(?:(\{(.*)\})\s*)?$", re.DOTALL)
_LINE_FILTER = re.compile(rf"\s*(\|=|!=|\|~|!~)\s*({_STRING})")


@dataclass(frozen=True, slots=True)
class Matcher:
    label: str
    op: str
    value: str

    def matches(self, labels: Mapping[str, str]) -> bool:
        actual = labels.get(self.label, "")
        if self.op == "=":
            return actual == self.value
        if self.op == "!=":
            return actual != self.value
        found = re.fullmatch(self.value, actual) is not None
        return found if self.op == "=~" else not found


def _unquote(text: str) -> str:
    if text.startswith("`"):
        return text[1:-1]
    return bytes(text[1:-1], "utf-8").decode("unicode_escape")


def _check_regex(tool: str, value: str) -> None:
    try:
        re.compile(value)
    except re.error as exc:
        raise ToolError(f"{tool}: bad regular expression {value!r}: {exc}") from None


def _matchers(tool: str, body: str) -> list[Matcher]:
    matchers: list[Matcher] = []
    rest = body.strip()
    while rest:
        match = _MATCHER.match(rest)
        if match is None:
            raise ToolError(f"{tool}: cannot read the label matchers {{{body}}}")
        label, op, raw, _ = match.groups()
        value = _unquote(raw)
        if op in ("=~", "!~"):
            _check_regex(tool, value)
        matchers.append(Matcher(label, op, value))
        rest = rest[match.end() :].strip()
    return matchers


def promql_selector(tool: str, query: str) -> list[Matcher]:
    """``metric{label="v", other=~"re"}`` -> matchers (the name as ``__name__``)."""
    match = _METRIC.fullmatch(query)
    if match is None or (match.group(1) is None and match.group(2) is None):
        raise ToolError(
            f"{tool}: a recorded incident answers plain series selectors only, e.g. "
            f'http_requests_error_rate{{service="checkout-api"}}; got {query[:200]!r}'
        )
    matchers = _matchers(tool, match.group(3) or "")
    if match.group(1):
        matchers.insert(0, Matcher("__name__", "=", match.group(1)))
    if not matchers:
        raise ToolError(f"{tool}: the selector matches every series; name a metric or a label")
    return matchers


@dataclass(frozen=True, slots=True)
class LogQuery:
    matchers: list[Matcher]
    filters: list[tuple[str, str]]

    def keeps(self, line: str) -> bool:
        for op, value in self.filters:
            if op == "|=" and value not in line:
                return False
            if op == "!=" and value in line:
                return False
            if op in ("|~", "!~"):
                found = re.search(value, line) is not None
                if found != (op == "|~"):
                    return False
        return True


def logql_query(tool: str, query: str) -> LogQuery:
    """``{app="x"} |= "error" !~ "health"`` -> stream matchers and line filters."""
    text = query.strip()
    if not text.startswith("{") or "}" not in text:
        raise ToolError(f'{tool}: a LogQL query starts with a stream selector such as {{service="checkout-api"}}')
    end = text.index("}")
    matchers = _matchers(tool, text[1:end])
    if not matchers:
        raise ToolError(f"{tool}: the stream selector needs at least one matcher")
    rest = text[end + 1 :]
    filters: list[tuple[str, str]] = []
    while rest.strip():
        match = _LINE_FILTER.match(rest)
        if match is None:
            raise ToolError(
                f"{tool}: a recorded incident answers stream selectors with line filters (|= != |~ !~) only; "
                f"cannot read {rest.strip()[:100]!r}"
            )
        op, raw = match.groups()
        value = _unquote(raw)
        if op in ("|~", "!~"):
            _check_regex(tool, value)
        filters.append((op, value))
        rest = rest[match.end() :]
    return LogQuery(matchers, filters)


# ---------------------------------------------------------------------------- Kubernetes selectors

_SET = re.compile(r"^\s*([A-Za-z0-9./_-]+)\s+(in|notin)\s+\(([^)]*)\)\s*$")


def _split_selector(text: str) -> list[str]:
    """Terms split on commas outside parentheses."""
    terms, depth, current = [], 0, ""
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            terms.append(current)
            current = ""
        else:
            current += ch
    terms.append(current)
    return [term.strip() for term in terms if term.strip()]


Labels = Mapping[str, str]
Object = Mapping[str, object]


def _label_test(key: str, op: str, values: frozenset[str]) -> Callable[[Labels], bool]:
    def test(labels: Labels) -> bool:
        if op == "exists":
            return key in labels
        if op == "!exists":
            return key not in labels
        found = labels.get(key) in values
        return found if op in ("in", "=") else not found

    return test


def label_selector(tool: str, text: str) -> Callable[[Labels], bool]:
    """A Kubernetes label selector (``a=b``, ``a!=b``, ``a in (x,y)``, ``a notin (x)``, ``a``, ``!a``)."""
    tests: list[Callable[[Labels], bool]] = []
    for term in _split_selector(text):
        set_match = _SET.match(term)
        if set_match:
            key, op, listed = set_match.groups()
            values = frozenset(v.strip() for v in listed.split(",") if v.strip())
            tests.append(_label_test(key, op, values))
            continue
        for op in ("!=", "==", "="):
            if op in term:
                key, value = (part.strip() for part in term.split(op, 1))
                tests.append(_label_test(key, "!=" if op == "!=" else "=", frozenset({value})))
                break
        else:
            if term.startswith("!"):
                tests.append(_label_test(term[1:].strip(), "!exists", frozenset()))
            elif re.fullmatch(r"[A-Za-z0-9./_-]+", term):
                tests.append(_label_test(term, "exists", frozenset()))
            else:
                raise ToolError(f"{tool}: unable to parse requirement: {term!r}")
    return lambda labels: all(test(labels) for test in tests)


def _field_test(getter: Callable[[Object], str], value: str, equal: bool) -> Callable[[Object], bool]:
    return lambda obj: (getter(obj) == value) == equal


def field_terms(tool: str, text: str, fields: Mapping[str, Callable[[Object], str]]) -> list[tuple[str, str, bool]]:
    """A field selector's terms (``f=v``, ``f==v``, ``f!=v``) as (field, value, equal), over the fields this kind
    supports."""
    terms: list[tuple[str, str, bool]] = []
    for term in _split_selector(text):
        op = "!=" if "!=" in term else "==" if "==" in term else "="
        if op not in term:
            raise ToolError(f"{tool}: invalid field selector: {term!r}")
        key, value = (part.strip() for part in term.split(op, 1))
        if key not in fields:
            raise ToolError(f'{tool}: field label not supported: "{key}"')
        terms.append((key, value, op != "!="))
    return terms


def field_test(
    terms: list[tuple[str, str, bool]], fields: Mapping[str, Callable[[Object], str]]
) -> Callable[[Object], bool]:
    """Whether an object holds every one of a field selector's ``field_terms``."""
    tests = [_field_test(fields[key], value, equal) for key, value, equal in terms]
    return lambda obj: all(test(obj) for test in tests)
