"""The text preprocessing of SentEval's `get_transfer_data.bash`, for `harness data senteval`.

- MR, CR, SUBJ, MPQA: `cat -v | sed -f tokenizer.sed`: non-printing bytes made visible, then
  Robert MacIntyre's Penn Treebank sed script (SentEval's data/downstream/tokenizer.sed);
  both are re-implemented here (`cat_v`, `ptb_tokenize`).
- STS12-16, STS-B, SICK: the Moses tokenizer as the script runs it (`tokenizer.perl -l en
  -no-escape`, then `lowercase.perl` for STS and STS-B), through sacremoses, the maintained
  Python port of Moses (`moses_tokenize`, `moses_lowercase`): no Perl, no mosesdecoder clone.
- TREC: every backquote and apostrophe removed (`sed -e "s/\\`//g"`, `sed -e "s/'//g"`).

Where sacremoses (0.2.0 checked) and today's tokenizer.perl differ, `moses_tokenize` follows Perl:
- tokenizer.perl always splits the period off a line's last word, prefix or not ("at 5 p.m."
  -> "at 5 p.m ."; "the U.S." -> "the U.S ."); sacremoses keeps such a word whole. SentEval's
  prepared STS files have the split ("5.30 p.m ."), so it is added here.
- Python's `\\s` counts the control bytes 0x1C-0x1F as spaces, Perl's does not: Perl drops them
  ("a<0x1F>b" -> "ab") where sacremoses would split the word; they are dropped first here.
- `lowercase.perl`'s `lc` maps each character alone; Python's `str.lower` turns a final capital
  sigma into "ς" where Perl gives "σ"; `moses_lowercase` lowers character by character.
Measured on 172,373 lines (SentEval's STS12-16 and STS-B sentences detokenised, SICK's as
stored, WMT newstest English), the result equals tokenizer.perl (mosesdecoder 0036c6c) on every
line, lower-cased or not; without the last-word rule 373 lines differed, all in that rule.
"""

from __future__ import annotations

import re
from functools import cache

import sacremoses


def cat_v(data: bytes) -> bytes:
    """Return `data` as GNU `cat -v` prints it: ^X for control bytes, M- for bytes >= 128."""
    out = bytearray()
    for byte in data:
        if byte in (9, 10):  # tab and newline pass through
            out.append(byte)
            continue
        if byte >= 128:
            out += b"M-"
            byte -= 128
        if byte < 32:
            out += b"^" + bytes([byte + 64])
        elif byte == 127:
            out += b"^?"
        else:
            out.append(byte)
    return bytes(out)


# MacIntyre's rules in order; each (pattern, replacement) is one `s=...=...=g` line of the script.
_PTB_BEFORE_PADDING = [
    (re.compile(r'^"'), "`` "),
    (re.compile(r'([ (\[{<])"'), r"\1 `` "),
    (re.compile(r"\.\.\."), " ... "),
    (re.compile(r"([,;:@#$%&])"), r" \1 "),
    # sentence tokenisation is assumed done: only a FINAL period is split off
    (re.compile(r"([^.])([.])([\])}>\"']*)[ \t]*$"), r"\1 \2\3 "),
    (re.compile(r"([?!])"), r" \1 "),
    (re.compile(r"([\][(){}<>])"), r" \1 "),
    (re.compile(r"--"), " -- "),
]
_PTB_AFTER_PADDING = [
    (re.compile(r'"'), " '' "),
    (re.compile(r"([^'])' "), r"\1 ' "),
    (re.compile(r"'([sSmMdD]) "), r" '\1 "),
    (re.compile(r"'ll "), " 'll "),
    (re.compile(r"'re "), " 're "),
    (re.compile(r"'ve "), " 've "),
    (re.compile(r"n't "), " n't "),
    (re.compile(r"'LL "), " 'LL "),
    (re.compile(r"'RE "), " 'RE "),
    (re.compile(r"'VE "), " 'VE "),
    (re.compile(r"N'T "), " N'T "),
    (re.compile(r" ([Cc])annot "), r" \1an not "),
    (re.compile(r" ([Dd])'ye "), r" \1' ye "),
    (re.compile(r" ([Gg])imme "), r" \1im me "),
    (re.compile(r" ([Gg])onna "), r" \1on na "),
    (re.compile(r" ([Gg])otta "), r" \1ot ta "),
    (re.compile(r" ([Ll])emme "), r" \1em me "),
    (re.compile(r" ([Mm])ore'n "), r" \1ore 'n "),
    (re.compile(r" '([Tt])is "), r" '\1 is "),
    (re.compile(r" '([Tt])was "), r" '\1 was "),
    (re.compile(r" ([Ww])anna "), r" \1an na "),
]


def ptb_tokenize(line: str) -> str:
    """Return `line` tokenized by SentEval's tokenizer.sed (Penn Treebank conventions).

    Like the sed script, the result keeps one trailing space ("it 's good . ").
    """
    for pattern, replacement in _PTB_BEFORE_PADDING:
        line = pattern.sub(replacement, line)
    line = f" {line} "
    for pattern, replacement in _PTB_AFTER_PADDING:
        line = pattern.sub(replacement, line)
    return re.sub(" +", " ", line).lstrip(" ")


def ptb_file(data: bytes) -> bytes:
    """Return a file's bytes after `cat -v | sed -f tokenizer.sed` (one output line per line)."""
    text = cat_v(data).decode("ascii")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return "".join(ptb_tokenize(line) + "\n" for line in lines).encode("ascii")


# Characters the sed script always pads with spaces, whatever surrounds them: in its output each
# stands alone as a token, as do "--" and "..." (and a double quote never remains).
_PTB_ALONE = frozenset(",;:@#$%&?![](){}<>")
# Endings the script splits off a word before a space (every line ends in one while it runs).
_PTB_SPLIT_ENDINGS = ("'s", "'S", "'m", "'M", "'d", "'D", "'ll", "'re", "'ve", "n't", "'LL",
                      "'RE", "'VE", "N'T")


def ptb_prepared(data: bytes) -> bool:
    """Whether a file's bytes look like `ptb_file`'s output: printable ASCII as `cat -v` leaves
    it (a CRLF line end aside), no double quote, every character the script pads unconditionally
    (`,;:@#$%&?!`, brackets, "--", "...") a token of its own, no line ending in a word with its
    period attached ("film."), and no word before a space with a contraction the script splits
    off ("people's", "can't") still attached.

    A released MR, CR, SUBJ or MPQA file fails this on many lines; SentEval's prepared files pass
    on every line. The test reads only what the script does unconditionally: applying the whole
    script again is not a test, since it is not idempotent (SUBJ's "it' 's" becomes "it ' 's").
    """
    data = data.replace(b"\r\n", b"\n")
    if cat_v(data) != data or b'"' in data:
        return False
    return all(_ptb_line_prepared(line) for line in data.decode("ascii").split("\n"))


def _ptb_line_prepared(line: str) -> bool:
    for token in line.split():
        if token in ("--", "..."):
            continue
        if "--" in token or "..." in token or (len(token) > 1 and _PTB_ALONE.intersection(token)):
            return False
    words = line.split()
    if words and len(words[-1]) > 1 and words[-1].endswith(".") and words[-1][-2] != ".":
        return False
    # The contraction rules match before a space (the line is padded with one while they run);
    # one that the script's later rule split off may still follow ("it'd 've").
    pieces = f" {line} ".split(" ")
    for token, after in zip(pieces, pieces[1:]):
        if after not in _PTB_SPLIT_ENDINGS and any(
                token.endswith(end) and token[:-len(end)].strip("'") for end in _PTB_SPLIT_ENDINGS):
            return False
    return True


def strip_quotes(data: bytes) -> bytes:
    """Return TREC's bytes without backquotes and apostrophes, as SentEval's sed calls do."""
    return data.replace(b"`", b"").replace(b"'", b"")


def quotes_stripped(data: bytes) -> bool:
    """Whether TREC's bytes are `strip_quotes`' output (no backquote or apostrophe left)."""
    return b"`" not in data and b"'" not in data


class _PerlMosesTokenizer(sacremoses.MosesTokenizer):
    """sacremoses' Moses tokenizer with tokenizer.perl's rule for a line's last word."""

    def handles_nonbreaking_prefixes(self, text: str) -> str:
        """Return `text` with periods split off as Moses does, the last word's always.

        sacremoses calls this on the padded text before multi-dots are restored (they are
        markers here, so a final "..." is left alone, as in Perl).
        """
        tokens = super().handles_nonbreaking_prefixes(text).split()
        if tokens and len(tokens[-1]) > 1 and tokens[-1].endswith("."):
            tokens[-1] = tokens[-1][:-1] + " ."
        return " ".join(tokens)


@cache
def _moses() -> _PerlMosesTokenizer:
    # Built once: loading the Unicode tables and prefix list costs more than a file's lines.
    return _PerlMosesTokenizer(lang="en")


# Whitespace to Python, control bytes to Perl, which deletes them instead (see the docstring).
_PERL_NON_SPACE = str.maketrans(dict.fromkeys(range(0x1C, 0x20)))
# tokenizer.perl prints a line matching /^\s*$/ untouched; Python's \s also takes 0x1C-0x1F.
_PERL_BLANK = re.compile(r"[^\S\x1c-\x1f]*")


def moses_tokenize(line: str) -> str:
    """Return `line` as `tokenizer.perl -l en -no-escape` prints it (without the newline).

    `line` holds no newline. sacremoses' arguments match the script's call: no `-a` (no
    aggressive hyphen splitting), no `-protected` patterns, `-no-escape` (no XML escaping).
    """
    if _PERL_BLANK.fullmatch(line):
        return line
    return _moses().tokenize(line.translate(_PERL_NON_SPACE), aggressive_dash_splits=False,
                             return_str=True, escape=False, protected_patterns=None)


def moses_lowercase(line: str) -> str:
    """Return `line` lower-cased as Moses' lowercase.perl (Perl's `lc`) does it."""
    # Character by character: Perl's lc has no final-sigma rule, str.lower has.
    return "".join(map(str.lower, line))
