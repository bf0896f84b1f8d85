"""The text preprocessing of SentEval's `get_transfer_data.bash`, for `harness data senteval`.

- MR, CR, SUBJ, MPQA: `cat -v | sed -f tokenizer.sed`: non-printing bytes made visible, then
  Robert MacIntyre's Penn Treebank sed script (SentEval's data/downstream/tokenizer.sed);
  both are re-implemented here (`cat_v`, `ptb_tokenize`).
- STS12-16, STS-B, SICK: the Moses tokenizer (`tokenizer.perl -l en -no-escape`), plus
  lower-casing for STS. Moses is a Perl script, run with the system's `perl` (`MosesTokenizer`).
- TREC: every backquote and apostrophe removed (`sed -e "s/\\`//g"`, `sed -e "s/'//g"`).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from harness.errors import DataError


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


def strip_quotes(data: bytes) -> bytes:
    """Return TREC's bytes without backquotes and apostrophes, as SentEval's sed calls do."""
    return data.replace(b"`", b"").replace(b"'", b"")


class MosesTokenizer:
    """Runs Moses' tokenizer.perl (`-l en -no-escape`) over lines, as SentEval's script does.

    `script` is `.../scripts/tokenizer/tokenizer.perl` with Moses' `share/nonbreaking_prefixes`
    beside it (`../share/...`), as in a clone of mosesdecoder.
    """

    def __init__(self, script: Path) -> None:
        self.script = script

    def __call__(self, lines: Sequence[str], *, lowercase: bool = False) -> list[str]:
        """Return the tokenized lines (lower-cased like Moses' lowercase.perl if asked)."""
        if not lines:
            return []
        perl = shutil.which("perl")
        if perl is None:
            raise DataError("SentEval's data preparation runs the Moses tokenizer, a Perl script, "
                            "for STS, STS-B and SICK: install perl (e.g. `apt-get install perl`) "
                            "or leave those tasks out")
        source = "".join(line.replace("\n", " ") + "\n" for line in lines).encode("utf-8")
        done = subprocess.run([perl, str(self.script), "-l", "en", "-no-escape", "-q"],
                              input=source, capture_output=True, check=False)
        if done.returncode != 0:
            message = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise DataError(f"{self.script}: the Moses tokenizer failed (exit {done.returncode}): "
                            f"{message[-1] if message else 'no message'}")
        output = done.stdout.decode("utf-8", "replace").split("\n")
        if output and output[-1] == "":
            output.pop()
        if len(output) != len(lines):
            raise DataError(f"{self.script}: the Moses tokenizer returned {len(output)} lines for "
                            f"{len(lines)}")
        return [line.lower() for line in output] if lowercase else output
