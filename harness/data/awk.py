"""awk's default field splitting: the rule behind Vec2Sent's length filter `awk 'NF<15'`.

With the default FS (a single space), POSIX awk "skips leading and trailing <blank> and
<newline> characters; fields are separated by sets of one or more <blank> or <newline>
characters" (POSIX.1-2017, awk, Variables and Special Variables, FS); <blank> is space and tab
in the C locale, and gawk and mawk agree. Nothing else separates fields: \\r, \\v, \\f and
Unicode spaces (U+00A0 no-break space, U+2009 thin space, ...) are part of a field. A
record is a line without its \\n (the default RS), so a CRLF line's \\r belongs to its last field.

Both `harness data newscrawl` (which writes what `awk 'NF<15'` prints) and the corpus stage
(`harness.text.reading`, which reads such files) count fields here, so the two never disagree.
"""

from __future__ import annotations

# bytes.split() splits on ASCII whitespace, i.e. also on \r, \v and \f, which awk's default FS
# does not: they are masked by a non-blank byte first (the count is all that is read).
_NOT_SEPARATORS = bytes.maketrans(b"\r\x0b\x0c", b"xxx")


def field_count(record: bytes, cap: int | None = None) -> int:
    """Return awk's NF for `record` (one line, without its \\n) under the default FS.

    Fields are maximal runs of bytes other than space and tab. With `cap`, counting stops early
    and the result is min(NF, cap): `field_count(r, M) < M` is `awk 'NF<M'` for any M >= 1, and
    never splits more than M fields off a long line.
    """
    if cap is not None and cap < 1:
        raise ValueError(f"cap must be at least 1, not {cap}")
    # split(None, k) gives at most k + 1 pieces, so min(NF, cap) pieces for k = cap - 1.
    return len(record.translate(_NOT_SEPARATORS).split(None, -1 if cap is None else cap - 1))
