"""Vector expressions over named sentences: `harness analogy SPEC --expr "a - b + c" --let a=...`.

A small, closed language, parsed by hand (a tokenizer and a recursive-descent parser; nothing
is ever handed to `eval`, `exec` or Python's parser):

    expression := term (("+" | "-") term)*
    term       := unary (("*" | "/") unary)*
    unary      := "-" unary | primary
    primary    := NUMBER | NAME | "(" expression ")"

NAME is a sentence given with `--let NAME=SENTENCE`; NUMBER is a decimal number (`2`, `0.5`,
`1e-3`). Values are numbers or sentence vectors: number * vector, vector / number and vector
+/- vector are vectors; a vector times a vector, a division by a vector, and adding a number to
a vector are errors. The paper's analogy (Kerscher & Eger 2020, section 4: u := r - s + v) is
`a - b + c`; an interpolation point (section 1: alpha x + (1 - alpha) y) is `0.3*x + 0.7*y`.

Limits keep every input cheap: 10,000 characters, 40 characters per number (finite values
only), and 50 levels of nesting (parentheses and unary minus).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from harness.errors import HarnessError

MAX_LENGTH = 10_000
MAX_DEPTH = 50
MAX_NUMBER_LENGTH = 40

_TOKEN = re.compile(r"\s*(?:(?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)"
                    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<op>\*\*|[-+*/()]))")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SPACE = re.compile(r"\s*")


class ExpressionError(HarnessError):
    """An expression that cannot be parsed or evaluated: where and why, on one line."""

    def __init__(self, message: str, column: int | None = None) -> None:
        self.column = column
        where = f"column {column}: " if column is not None else ""
        super().__init__(f"--expr: {where}{message}")


@dataclass(frozen=True)
class Token:
    kind: str  # "number", "name", "op" or "end"
    text: str
    column: int  # 1-based


@dataclass(frozen=True)
class Number:
    value: float


@dataclass(frozen=True)
class Name:
    name: str
    column: int


@dataclass(frozen=True)
class Negate:
    operand: Node


@dataclass(frozen=True)
class Binary:
    op: str
    left: Node
    right: Node
    column: int


Node = Number | Name | Negate | Binary


def tokenize(text: str) -> list[Token]:
    """The tokens of `text`, ended by an "end" token; raise `ExpressionError` for a character
    outside the language or a number out of range."""
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"longer than {MAX_LENGTH} characters")
    tokens, position = [], 0
    while (position := _SPACE.match(text, position).end()) < len(text):  # type: ignore[union-attr]
        match = _TOKEN.match(text, position)
        if match is None:
            raise ExpressionError(_unexpected_character(text[position]), position + 1)
        kind = match.lastgroup or "op"
        value = match.group(kind)
        column = match.start(kind) + 1
        if kind == "op" and value == "**":
            raise ExpressionError("'**' (power) is not supported; use + - * / only", column)
        if kind == "number":
            _check_number(value, column)
        tokens.append(Token(kind, value, column))
        position = match.end()
    tokens.append(Token("end", "", len(text) + 1))
    return tokens


def _unexpected_character(char: str) -> str:
    if char == ".":
        return "'.' (attribute access) is not supported"
    if char in "[]{},;=<>!&|^%@~:'\"`\\":
        return f"{char!r} is not part of the language (names, numbers, + - * /, parentheses)"
    return f"unexpected character {char!r}"


def _check_number(text: str, column: int) -> None:
    if len(text) > MAX_NUMBER_LENGTH:
        raise ExpressionError(f"number {text[:12]}... is longer than {MAX_NUMBER_LENGTH} "
                              "characters", column)
    if not math.isfinite(float(text)):
        raise ExpressionError(f"number {text} is out of range", column)


class _Parser:
    """Recursive descent over the tokens, depth-limited."""

    def __init__(self, tokens: list[Token]) -> None:
        self.tokens, self.index, self.depth = tokens, 0, 0

    @property
    def current(self) -> Token:
        return self.tokens[self.index]

    def advance(self) -> Token:
        token = self.current
        self.index += 1
        return token

    def expression(self) -> Node:
        node = self.term()
        while self.current.text in ("+", "-") and self.current.kind == "op":
            op = self.advance()
            node = Binary(op.text, node, self.term(), op.column)
        return node

    def term(self) -> Node:
        node = self.unary()
        while self.current.text in ("*", "/") and self.current.kind == "op":
            op = self.advance()
            node = Binary(op.text, node, self.unary(), op.column)
        return node

    def unary(self) -> Node:
        if self.current.kind == "op" and self.current.text == "-":
            token = self.advance()
            with self.nested(token):
                return Negate(self.unary())
        return self.primary()

    def primary(self) -> Node:
        token = self.current
        if token.kind == "number":
            self.advance()
            return Number(float(token.text))
        if token.kind == "name":
            self.advance()
            if self.current.kind == "op" and self.current.text == "(":
                raise ExpressionError(f"calls such as {token.text}(...) are not supported",
                                      self.current.column)
            return Name(token.text, token.column)
        if token.kind == "op" and token.text == "(":
            self.advance()
            with self.nested(token):
                node = self.expression()
            if not (self.current.kind == "op" and self.current.text == ")"):
                raise ExpressionError(f"expected ')' to close the '(' at column {token.column}"
                                      f", found {_describe(self.current)}", self.current.column)
            self.advance()
            return node
        raise ExpressionError(f"expected a name, a number or '(', found {_describe(token)}",
                              token.column)

    def nested(self, token: Token) -> _Depth:
        return _Depth(self, token)


class _Depth:
    def __init__(self, parser: _Parser, token: Token) -> None:
        self.parser, self.token = parser, token

    def __enter__(self) -> None:
        self.parser.depth += 1
        if self.parser.depth > MAX_DEPTH:
            raise ExpressionError(f"nested deeper than {MAX_DEPTH} levels", self.token.column)

    def __exit__(self, *exc: object) -> None:
        self.parser.depth -= 1


def _describe(token: Token) -> str:
    return "the end of the expression" if token.kind == "end" else repr(token.text)


def parse(text: str) -> Node:
    """The syntax tree of `text`; raise `ExpressionError` (one line, with the column) when it
    is not an expression of the language."""
    tokens = tokenize(text)
    if tokens[0].kind == "end":
        raise ExpressionError("empty expression; e.g. --expr \"a - b + c\"")
    parser = _Parser(tokens)
    node = parser.expression()
    if parser.current.kind != "end":
        raise ExpressionError(f"unexpected {_describe(parser.current)} after a complete "
                              "expression", parser.current.column)
    return node


def names(node: Node) -> list[str]:
    """The names `node` uses, in order of first use."""
    if isinstance(node, Name):
        return [node.name]
    if isinstance(node, Negate):
        return names(node.operand)
    if isinstance(node, Binary):
        return list(dict.fromkeys(names(node.left) + names(node.right)))
    return []


Value = float | np.ndarray


def evaluate(node: Node, lookup: Mapping[str, np.ndarray]) -> np.ndarray:
    """The vector `node` stands for, names looked up in `lookup` (name -> vector); raise
    `ExpressionError` for an undefined name, an operation the language does not allow, or a
    result that is a number or not finite."""
    value = _value(node, lookup)
    if not isinstance(value, np.ndarray):
        raise ExpressionError("the expression gives a number, not a sentence vector")
    if not np.all(np.isfinite(value)):
        raise ExpressionError("the result is not finite (a number too large?)")
    return value


_OPERATIONS: dict[str, Callable[[Value, Value], Value]] = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b,
    "*": lambda a, b: a * b, "/": lambda a, b: a / b,
}


def _value(node: Node, lookup: Mapping[str, np.ndarray]) -> Value:
    if isinstance(node, Number):
        return node.value
    if isinstance(node, Name):
        if node.name not in lookup:
            defined = ", ".join(sorted(lookup)) or "none"
            raise ExpressionError(f"undefined name {node.name!r} (defined with --let: "
                                  f"{defined})", node.column)
        return np.asarray(lookup[node.name], dtype=np.float64)
    if isinstance(node, Negate):
        return -_value(node.operand, lookup)
    left, right = _value(node.left, lookup), _value(node.right, lookup)
    _check_operation(node, isinstance(left, np.ndarray), isinstance(right, np.ndarray), right)
    with np.errstate(over="ignore", invalid="ignore"):
        result = _OPERATIONS[node.op](left, right)
    if not isinstance(result, np.ndarray):
        result = float(result)
        if not math.isfinite(result):
            raise ExpressionError(f"'{node.op}' gives a number out of range", node.column)
    return result


def _check_operation(node: Binary, left_vector: bool, right_vector: bool, right: Value) -> None:
    op, column = node.op, node.column
    if op in "+-" and left_vector != right_vector:
        raise ExpressionError(f"cannot {'add' if op == '+' else 'subtract'} a number and a "
                              "sentence vector; scale vectors with * instead", column)
    if op == "*" and left_vector and right_vector:
        raise ExpressionError("cannot multiply two sentence vectors; multiply a vector by a "
                              "number", column)
    if op == "/" and right_vector:
        raise ExpressionError("cannot divide by a sentence vector; divide by a number", column)
    if op == "/" and not right_vector and float(right) == 0.0:
        raise ExpressionError("division by zero", column)


def parse_lets(assignments: list[str] | tuple[str, ...]) -> dict[str, str]:
    """NAME -> sentence of `--let NAME=SENTENCE` options; raise for a malformed or repeated
    one."""
    found: dict[str, str] = {}
    for assignment in assignments:
        name, sep, sentence = assignment.partition("=")
        name = name.strip()
        if not sep or not _NAME.fullmatch(name):
            raise HarnessError(f"--let {assignment!r}: expected NAME=SENTENCE, NAME a letter or "
                               "_ followed by letters, digits or _")
        if name in found:
            raise HarnessError(f"--let {name}: given twice")
        if not sentence.strip():
            raise HarnessError(f"--let {name}: the sentence is empty")
        found[name] = sentence
    return found
