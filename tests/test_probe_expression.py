"""The `--expr` language: a hand-written parser over a tokenizer, evaluated over vectors; every
input outside the language is refused with a one-line error, before any encoder loads."""

from __future__ import annotations

import numpy as np
import pytest

from harness.analyses.probes.expression import (
    MAX_DEPTH,
    Binary,
    ExpressionError,
    Name,
    Negate,
    Number,
    evaluate,
    names,
    parse,
    parse_lets,
)
from harness.errors import HarnessError

VECTORS = {"a": np.array([1.0, 2.0, 3.0]), "b": np.array([0.5, 0.5, 0.5]),
           "c": np.array([-1.0, 0.0, 4.0])}


@pytest.mark.parametrize(("text", "expected"), [
    ("a - b + c", VECTORS["a"] - VECTORS["b"] + VECTORS["c"]),
    ("a-b+c", VECTORS["a"] - VECTORS["b"] + VECTORS["c"]),
    ("b - a + c", VECTORS["b"] - VECTORS["a"] + VECTORS["c"]),
    ("0.3*a + 0.7*b", 0.3 * VECTORS["a"] + 0.7 * VECTORS["b"]),
    ("a*2 - -b", 2 * VECTORS["a"] + VECTORS["b"]),
    ("-(a - b) / 4", -(VECTORS["a"] - VECTORS["b"]) / 4),
    ("(1 + 1) * a", 2 * VECTORS["a"]),
    ("2 * 3 * a / 6", VECTORS["a"]),
    ("1e-1 * a + .5 * c", 0.1 * VECTORS["a"] + 0.5 * VECTORS["c"]),
    ("  a  ", VECTORS["a"]),
])
def test_expressions_evaluate_over_vectors(text: str, expected: np.ndarray) -> None:
    assert np.allclose(evaluate(parse(text), VECTORS), expected)


def test_precedence_and_associativity() -> None:
    """* binds tighter than -, and both associate to the left."""
    assert parse("a - b - c") == Binary("-", Binary("-", Name("a", 1), Name("b", 5), 3),
                                        Name("c", 9), 7)
    tree = parse("a - 2 * b")
    assert isinstance(tree, Binary) and tree.op == "-" and tree.right == Binary(
        "*", Number(2.0), Name("b", 9), 7)
    assert parse("--a") == Negate(Negate(Name("a", 3)))
    assert names(parse("c + a - c * 2")) == ["c", "a"]


@pytest.mark.parametrize(("text", "needle"), [
    ("a.b", "column 2: '.' (attribute access) is not supported"),
    ("a.__class__", "attribute access"),
    ("f(a)", "column 2: calls such as f(...) are not supported"),
    ("__import__(os)", "calls such as __import__(...)"),
    ("__import__('os')", "is not part of the language"),
    ("d", "column 1: undefined name 'd' (defined with --let: a, b, c)"),
    ("a + zz", "undefined name 'zz'"),
    ("2**99999", "'**' (power) is not supported"),
    ("a ** 2", "'**' (power) is not supported"),
    ("9e999999", "number 9e999999 is out of range"),
    ("9e999999 * a", "out of range"),
    ("1" * 50 + " * a", "longer than 40 characters"),
    ("1e308 * 1e308 * a", "'*' gives a number out of range"),
    ("1e300 * a * 1e300", "the result is not finite"),
    ("(" * 1000 + "a" + ")" * 1000, f"nested deeper than {MAX_DEPTH} levels"),
    ("-" * 1000 + "a", f"nested deeper than {MAX_DEPTH} levels"),
    ("a" * 10_001, "longer than 10000 characters"),
    ("", "empty expression"),
    ("   ", "empty expression"),
    ("a b", "column 3: unexpected 'b' after a complete expression"),
    ("a - b + c)", "unexpected ')' after a complete expression"),
    ("a +", "expected a name, a number or '(', found the end of the expression"),
    ("(a - b", "expected ')' to close the '(' at column 1"),
    ("* a", "column 1: expected a name, a number or '('"),
    ("a * b", "cannot multiply two sentence vectors"),
    ("a / b", "cannot divide by a sentence vector"),
    ("2 / a", "cannot divide by a sentence vector"),
    ("a / 0", "division by zero"),
    ("a / (1 - 1)", "division by zero"),
    ("1 + a", "cannot add a number and a sentence vector"),
    ("a - 1", "cannot subtract a number and a sentence vector"),
    ("2 * 3", "the expression gives a number, not a sentence vector"),
    ("a[0]", "'[' is not part of the language"),
    ("a; b", "';' is not part of the language"),
    ("lambda: a", "':' is not part of the language"),
    ("a $ b", "column 3: unexpected character '$'"),
])
def test_inputs_outside_the_language_are_one_line_errors(text: str, needle: str) -> None:
    with pytest.raises(ExpressionError) as caught:
        evaluate(parse(text), VECTORS)
    message = str(caught.value)
    assert message.startswith("--expr: ") and "\n" not in message
    assert needle in message, message
    assert isinstance(caught.value, HarnessError)  # the CLI exits with 2


def test_parsing_never_evaluates_python(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing reaches eval, exec or Python's own parser."""
    import builtins

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("Python code was evaluated")

    for name in ("eval", "exec", "compile"):
        monkeypatch.setattr(builtins, name, refuse)
    assert np.allclose(evaluate(parse("0.5*a + 0.5*b"), VECTORS),
                       0.5 * VECTORS["a"] + 0.5 * VECTORS["b"])


@pytest.mark.parametrize(("lets", "needle"), [
    (["a"], "expected NAME=SENTENCE"),
    (["1a=x"], "expected NAME=SENTENCE"),
    (["a.b=x"], "expected NAME=SENTENCE"),
    (["a=x", "a=y"], "--let a: given twice"),
    (["a=  "], "--let a: the sentence is empty"),
])
def test_bad_lets_are_refused(lets: list[str], needle: str) -> None:
    with pytest.raises(HarnessError, match=needle.replace(".", r"\.")):
        parse_lets(lets)


def test_lets_keep_their_sentence_whole() -> None:
    assert parse_lets(["a=he said x = y .", " b =she sees it ."]) == {
        "a": "he said x = y .", "b": "she sees it ."}
