#!/usr/bin/env python3
"""Generate the frozen tokenizer tables of scriptorium-retrieval from CPython's Unicode database.

The retrieval tokenizer must split and fold text exactly as the reference does with
Python 3.11's `re.findall(r"[^\\W_]+", text)` and `str.casefold()` (spec 02 §6.2,
05-dependencies §A9). Rust's own tables differ (combining marks, `ß`), so the two
classes are taken from CPython once and committed.

Run through `cargo xtask gen-unicode-tables`, which writes stdout to
crates/scriptorium-retrieval/src/tokenize/tables.rs. Output is deterministic.
"""

import re
import sys
import unicodedata

EXPECTED_UNIDATA_VERSION = "14.0.0"
MAX_CODE_POINT = 0x10FFFF
WORD = re.compile(r"[^\W_]")
RANGES_PER_LINE = 6
FOLDS_PER_LINE = 5


def is_surrogate(cp):
    return 0xD800 <= cp <= 0xDFFF


def word_ranges():
    """Inclusive ranges of the code points `[^\\W_]` matches, checked against str.isalnum()."""
    ranges = []
    for cp in range(MAX_CODE_POINT + 1):
        if is_surrogate(cp):
            continue  # not a Rust `char`; Python matches none of them anyway
        ch = chr(cp)
        matched = WORD.fullmatch(ch) is not None
        if matched != ch.isalnum():
            sys.exit(f"[^\\W_] and str.isalnum() disagree at U+{cp:04X}")
        if not matched:
            continue
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp])
    return ranges


def case_folds():
    """(code point, folded string) for every code point whose casefold differs from itself."""
    folds = []
    for cp in range(MAX_CODE_POINT + 1):
        if is_surrogate(cp):
            continue
        ch = chr(cp)
        folded = ch.casefold()
        if folded != ch:
            folds.append((cp, folded))
    return folds


def rust_string(text):
    """A Rust string literal holding `text`, ASCII-only (non-ASCII as \\u{...})."""
    out = []
    for ch in text:
        if 0x20 <= ord(ch) < 0x7F and ch not in '"\\':
            out.append(ch)
        else:
            out.append("\\u{%x}" % ord(ch))
    return '"' + "".join(out) + '"'


def chunks(items, size):
    for start in range(0, len(items), size):
        yield items[start : start + size]


def main():
    version = unicodedata.unidata_version
    if version != EXPECTED_UNIDATA_VERSION:
        sys.exit(f"unicodedata.unidata_version is {version}, the reference used {EXPECTED_UNIDATA_VERSION}: "
                 "run with Python 3.11")
    ranges = word_ranges()
    folds = case_folds()
    lines = [
        "//! Frozen tokenizer tables from CPython's Unicode database. GENERATED: do not edit.",
        "//!",
        "//! Regenerate with `cargo xtask gen-unicode-tables` (runs `python3 xtask/gen/unicode_tables.py`).",
        f"//! Python {sys.version_info.major}.{sys.version_info.minor}, "
        f"`unicodedata.unidata_version` = {version}.",
        "",
        "/// `unicodedata.unidata_version` of the Python that generated these tables.",
        f'pub(crate) const UNIDATA_VERSION: &str = "{version}";',
        "",
        "/// Inclusive code point ranges matched by Python's `re` class `[^\\W_]` (equal to",
        "/// `str.isalnum()`), sorted and disjoint.",
        "pub(crate) const WORD_RANGES: &[(u32, u32)] = &[",
    ]
    for chunk in chunks(ranges, RANGES_PER_LINE):
        lines.append("    " + " ".join("(0x%x, 0x%x)," % (lo, hi) for lo, hi in chunk))
    lines.append("];")
    lines.append("")
    lines.append("/// Every code point whose `str.casefold()` differs from itself, sorted, with its folding.")
    lines.append("pub(crate) const CASE_FOLDS: &[(u32, &str)] = &[")
    for chunk in chunks(folds, FOLDS_PER_LINE):
        lines.append("    " + " ".join("(0x%x, %s)," % (cp, rust_string(folded)) for cp, folded in chunk))
    lines.append("];")
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
