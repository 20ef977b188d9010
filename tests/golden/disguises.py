"""How the adversarial suite disguises a text it plants: invisible and look-alike characters, fullwidth and
mathematical letters, markdown, reordered and split text. ``variant`` gives each normalization vector's form."""

from __future__ import annotations

from .leaks import Haystack

# Invisible and look-alike characters.
ZWSP, ZWJ, WJ, BOM, SHY = "\u200b", "\u200d", "\u2060", "\ufeff", "\u00ad"
NBSP, NNBSP, IDSP, LSEP = "\u00a0", "\u202f", "\u3000", "\u2028"
RLO, PDF, RLI, PDI, LRO = "\u202e", "\u202c", "\u2067", "\u2069", "\u202d"
CYRILLIC = str.maketrans("aceopxyABCEHKMOPTX", "асеорхуАВСЕНКМОРТХ")
GREEK = str.maketrans("aoviABEHIKMNOPTXYZ", "αονιΑΒΕΗΙΚΜΝΟΡΤΧΥΖ")

# The ways a Composer may restate a statement so that a plain substring search misses it.
NORMALIZATION_VECTORS = (
    "ws-extra-spaces",
    "ws-nbsp",
    "ws-newline",
    "ws-tab-linesep",
    "zw-200b",
    "zw-200d",
    "zw-2060",
    "zw-feff",
    "soft-hyphen",
    "fullwidth",
    "math-bold",
    "homoglyph-cyrillic",
    "homoglyph-greek",
    "md-bold",
    "md-underscore",
    "md-backtick",
    "reordered",
    "split-items",
    "paraphrase-ids",
)


def fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else IDSP if c == " " else c for c in text)


def math_bold(text: str) -> str:
    out = []
    for c in text:
        if "a" <= c <= "z":
            out.append(chr(0x1D41A + ord(c) - ord("a")))
        elif "A" <= c <= "Z":
            out.append(chr(0x1D400 + ord(c) - ord("A")))
        elif "0" <= c <= "9":
            out.append(chr(0x1D7CE + ord(c) - ord("0")))
        else:
            out.append(c)
    return "".join(out)


def middle(text: str, insert: str) -> str:
    half = len(text) // 2
    return text[:half] + insert + text[half:]


def reversed_behind_override(text: str) -> str:
    """``text`` written backwards between a right-to-left override and its pop: it displays as ``text``."""
    return RLO + text[::-1] + PDF


def variant(name: str, statement: str, marker: str) -> list[str]:
    """The item text(s) in which a Composer restates ``statement`` (holding ``marker``) in the form ``name``."""
    k = len(marker) // 2
    head, _, tail = statement.partition(marker)
    forms: dict[str, list[str]] = {
        "ws-extra-spaces": [statement.replace(" ", "   ")],
        "ws-nbsp": [statement.replace(" ", NBSP).replace(marker, marker.replace("-", "-" + NNBSP, 1))],
        "ws-newline": [statement.replace(marker, middle(marker, "\n"))],
        "ws-tab-linesep": [statement.replace(" ", "\t").replace(marker, middle(marker, LSEP))],
        "zw-200b": [statement.replace(marker, ZWSP.join(marker))],
        "zw-200d": [statement.replace(marker, middle(marker, ZWJ))],
        "zw-2060": [statement.replace(marker, WJ.join(marker))],
        "zw-feff": [statement.replace(marker, middle(marker, BOM))],
        "soft-hyphen": [statement.replace(marker, middle(marker, SHY))],
        "fullwidth": [fullwidth(statement)],
        "math-bold": [statement.replace(marker, math_bold(marker))],
        "homoglyph-cyrillic": [statement.translate(CYRILLIC)],
        "homoglyph-greek": [statement.translate(GREEK)],
        "md-bold": [statement.replace(marker, f"**{marker[:k]}**{marker[k:]}")],
        "md-underscore": [statement.replace(marker, f"_{marker[:k]}_{marker[k:]}")],
        "md-backtick": [statement.replace(marker, f"`{marker[:k]}``{marker[k:]}`")],
        "reordered": [" ".join(reversed(statement.split(" ")))],
        "split-items": [f"{head}{marker[:k]}", f"{marker[k:]}{tail}"],
        "paraphrase-ids": [f"Per the evidence, {marker} is where it goes wrong."],
    }
    texts = forms[name]
    joined_texts = "\n- ".join(texts)
    assert marker in Haystack(joined_texts), f"the {name} form of {marker!r} escapes the suite's own normalization"
    return texts
