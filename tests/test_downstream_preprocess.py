"""SentEval's text preprocessing: cat -v, the PTB sed script, TREC's quote removal, Moses."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from sacremoses import MosesDetokenizer

from harness.data.preprocess import (
    cat_v,
    moses_lowercase,
    moses_tokenize,
    ptb_file,
    ptb_tokenize,
    strip_quotes,
)


def test_cat_v_as_gnu_cat() -> None:
    # control bytes -> ^X, DEL -> ^?, high bytes -> M- plus the low byte's form; tab, LF stay
    assert cat_v(b"a\x85b\tc\x01\x7f\x89\xe9\n") == b"aM-^Eb\tc^A^?M-^IM-i\n"


@pytest.mark.parametrize(("line", "tokens"), [
    ('He said "it\'s good..." (really)!', "He said `` it 's good ... '' ( really ) ! "),
    ("I can't go, gonna stay.", "I ca n't go , gon na stay . "),
    ("Cannot wait -- they're here; we'll see ?", "Can not wait -- they 're here ; we 'll see ? "),
    ("U.S. troops at 5 p.m.", "U.S. troops at 5 p.m . "),  # only the final period splits
    ("the kids' toys.", "the kids ' toys . "),
    ("  spaced   out  ", "spaced out "),
])
def test_ptb_tokenize_hand_computed(line: str, tokens: str) -> None:
    assert ptb_tokenize(line) == tokens


def test_ptb_file_is_cat_v_then_sed_line_by_line() -> None:
    assert ptb_file(b"It's \x85 ok.\n\nlast line") == b"It 's M-^E ok . \n\nlast line \n"


def test_trec_quotes_removed() -> None:
    assert strip_quotes(b"What 's `the` name ?\n") == b"What s the name ?\n"


# Written by hand from tokenizer.perl's rules (-l en -no-escape); each line exercises one of them.
MOSES_CASES = [
    # quotes padded; the clitic 's split off; a period before a closing quote split
    ('He said "it\'s fine."', 'He said " it \'s fine . "'),
    ("I can't believe they're here, aren't you?", "I can 't believe they 're here , aren 't you ?"),
    # a possessive apostrophe and a leading one before digits stand alone
    ("The kids' toys and the '90s.", "The kids ' toys and the ' 90s ."),
    ("The 1990's were great.", "The 1990 's were great ."),  # the "1990's" special case
    ("a well-known, state-of-the-art system", "a well-known , state-of-the-art system"),  # no -a
    # currency padded, commas and periods inside numbers kept, "i.e." kept
    ("It costs $5,300.50 or 1,000 euros, i.e. a lot.",
     "It costs $ 5,300.50 or 1,000 euros , i.e. a lot ."),
    ("3.5 million, or 2.5%.", "3.5 million , or 2.5 % ."),
    ("Wait... what?", "Wait ... what ?"),  # an ellipsis stays one token
    ("See (www.example.com) or http://example.com/a-b.",
     "See ( www.example.com ) or http : / / example.com / a-b ."),
    # non-breaking prefixes: titles, initialisms and months keep their period inside a line
    ("Mr. Smith met Dr. Jones in the U.S. on Jan. 5.",
     "Mr. Smith met Dr. Jones in the U.S. on Jan. 5 ."),
    # ...but a line's last word always loses it (where sacremoses alone differs)
    ("He lives in the U.S.", "He lives in the U.S ."),
    ("The meeting ends at 5 p.m.", "The meeting ends at 5 p.m ."),
    ("No. 5 is better than No. Six.", "No. 5 is better than No . Six ."),  # "No" before digits only
    ("She said 'hello' & left; 100% sure!", "She said ' hello ' & left ; 100 % sure !"),
    ("\u201cCurly quotes\u201d and \u2014 dashes", "\u201c Curly quotes \u201d and \u2014 dashes"),
    ("He said 'stop.'", "He said ' stop . ' "),  # Perl's ".'" rule leaves a trailing space
    ("A man is slicing a tomato", "A man is slicing a tomato"),  # SICK: nothing to split
    ("  extra   spaces\there ", "extra spaces here"),
    ("a\x1fb c", "ab c"),  # Perl deletes control bytes that Python would call spaces
    ("", ""),
    ("  ", "  "),  # a blank line is printed untouched
]


@pytest.mark.parametrize(("line", "tokens"), MOSES_CASES)
def test_moses_tokenize_hand_written(line: str, tokens: str) -> None:
    assert moses_tokenize(line) == tokens


def test_moses_lowercase_as_perl_lc() -> None:
    assert moses_lowercase(moses_tokenize("The U.S. Senate's vote.")) == "the u.s. senate 's vote ."
    assert moses_lowercase("ΣΟΦΟΣ") == "σοφοσ"  # Perl's lc has no final-sigma rule


def _moses_scripts() -> Path:
    """Return a mosesdecoder scripts/ directory from HARNESS_MOSES_SCRIPTS, or skip."""
    scripts = os.environ.get("HARNESS_MOSES_SCRIPTS")
    if not scripts or shutil.which("perl") is None:
        pytest.skip("set HARNESS_MOSES_SCRIPTS to a mosesdecoder scripts/ directory, with perl on "
                    "PATH, to compare with tokenizer.perl")
    if not (Path(scripts) / "tokenizer" / "tokenizer.perl").is_file():
        pytest.fail(f"HARNESS_MOSES_SCRIPTS={scripts}: no tokenizer/tokenizer.perl inside")
    return Path(scripts)


def _perl(scripts: Path, lines: list[str], lowercase: bool = False) -> list[str]:
    """Return `lines` through tokenizer.perl as SentEval's script calls it [| lowercase.perl]."""
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    commands = [["perl", str(scripts / "tokenizer" / "tokenizer.perl"), "-l", "en", "-no-escape",
                 "-q"]]
    if lowercase:
        commands.append(["perl", str(scripts / "tokenizer" / "lowercase.perl")])
    for command in commands:
        data = subprocess.run(command, input=data, capture_output=True, check=True).stdout
    return data.decode("utf-8").split("\n")[:-1]


def test_hand_written_cases_are_what_tokenizer_perl_prints() -> None:
    lines, expected = zip(*MOSES_CASES, strict=True)
    assert _perl(_moses_scripts(), list(lines)) == list(expected)


def _senteval_sentences(root: Path, per_file: int) -> tuple[list[str], list[str]]:
    """Return (SICK's sentences, STS12-16 and STS-B's sentences detokenised) from `root`.

    Only SentEval's prepared files exist there; SICK's sentences are nearly raw, the STS ones
    are turned back into running text with sacremoses' Moses detokenizer.
    """
    def rows(path: Path) -> list[list[str]]:
        text = path.read_text(encoding="utf-8").splitlines()[:per_file]
        return [line.split("\t") for line in text]

    sick = [s for f in sorted((root / "SICK").glob("SICK_*.txt")) for r in rows(f)[1:]
            for s in r[1:3]]
    detokenize = MosesDetokenizer(lang="en").detokenize
    sts_files = sorted((root / "STS").glob("STS1*-en-test/STS.input.*.txt"))
    stsb_files = sorted((root / "STS" / "STSBenchmark").glob("sts-*.csv"))
    sts = [detokenize(s.split()) for f in sts_files for r in rows(f) for s in r[:2]]
    sts += [detokenize(s.split()) for f in stsb_files for r in rows(f) for s in r[5:7]]
    return sick, sts


def test_same_tokens_as_tokenizer_perl_on_senteval_sentences() -> None:
    scripts = _moses_scripts()
    if "HARNESS_SENTEVAL_DIR" not in os.environ:
        pytest.skip("set HARNESS_SENTEVAL_DIR to a SentEval data/downstream directory")
    sick, sts = _senteval_sentences(Path(os.environ["HARNESS_SENTEVAL_DIR"]), per_file=300)
    assert len(sick) > 1000 and len(sts) > 1000
    assert [moses_tokenize(s) for s in sick] == _perl(scripts, sick)
    assert [moses_lowercase(moses_tokenize(s)) for s in sts] == _perl(scripts, sts, lowercase=True)
