"""SentEval's text preprocessing: cat -v, the PTB sed script, TREC's quote removal, Moses."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness.data.preprocess import MosesTokenizer, cat_v, ptb_file, ptb_tokenize, strip_quotes
from harness.errors import DataError


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


needs_perl = pytest.mark.skipif(shutil.which("perl") is None, reason="needs perl")


@needs_perl
def test_moses_runner_passes_lines_through_perl(tmp_path: Path) -> None:
    script = tmp_path / "tokenizer.perl"
    script.write_text('die "args @ARGV" unless "@ARGV" eq "-l en -no-escape -q";\n'
                      'while (<STDIN>) { s/\\./ ./g; print; }\n')
    tokenize = MosesTokenizer(script)
    assert tokenize(["A Dog.", "", "Two.Dots."], lowercase=True) == ["a dog .", "", "two .dots ."]
    assert tokenize(["Keep Case."]) == ["Keep Case ."]


@needs_perl
def test_moses_failure_is_one_line(tmp_path: Path) -> None:
    script = tmp_path / "tokenizer.perl"
    script.write_text('die "cannot find nonbreaking prefixes\\n";\n')
    with pytest.raises(DataError, match=r"tokenizer\.perl: the Moses tokenizer failed \(exit "
                                        r"\d+\): cannot find nonbreaking prefixes"):
        MosesTokenizer(script)(["a"])


def test_missing_perl_says_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(DataError, match="install perl"):
        MosesTokenizer(tmp_path / "tokenizer.perl")(["a"])
