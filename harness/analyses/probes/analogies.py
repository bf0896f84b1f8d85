"""Scored sentence analogies (Kerscher & Eger 2020, section 4 and Table 2, right).

An analogy set is a UTF-8 text file of tab-separated rows (docs/probes.md):

    a <TAB> b <TAB> c [<TAB> expected [<TAB> relation]]

`#` starts a comment line; blank lines are skipped; a first row `a b c [expected [relation]]`
is a header. Each row is solved by decoding one vector: with the paper's form (a : b :: z : c)
u = vec(a) - vec(b) + vec(c), with the classic form (a : b :: c : d) u = vec(b) - vec(a) +
vec(c). The output is scored against `expected` where the row gives one (exact match and
sentence BLEU); every output is also checked for being a new sentence, non-empty and different
from a, b and c (what a set without expectations can still say).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from harness.analyses.probes.results import AnalogyGroup, AnalogyOutput, AnalogySetResult, Form
from harness.analyses.probes.scoring import mean, rate, same, sentence_bleu
from harness.errors import DataError
from harness.text.outputs import is_empty

COLUMNS = ("a", "b", "c", "expected", "relation")
RELATION = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:/+-]{0,63}")
"""A relation type: a label of letters, digits and - _ . : / +, at most 64 characters."""
MAX_ITEMS = 100_000


@dataclass(frozen=True)
class AnalogyItem:
    """One row: the query sentences, the expected answer (None when the row gives none), the
    relation type (None when the row names none) and the line it was read from."""

    a: str
    b: str
    c: str
    expected: str | None = None
    relation: str | None = None
    line: int = 0


@dataclass(frozen=True)
class AnalogySet:
    """An analogy set: its name, where it came from, how its rows are solved, its items."""

    name: str
    source: str
    form: Form
    items: tuple[AnalogyItem, ...]

    def normalised(self, normalise: Callable[[str], str]) -> AnalogySet:
        """The set with every sentence normalised as the spec's corpus is."""
        def norm(text: str | None) -> str | None:
            return None if text is None else normalise(text)

        return replace(self, items=tuple(
            replace(item, a=normalise(item.a), b=normalise(item.b), c=normalise(item.c),
                    expected=norm(item.expected)) for item in self.items))


def read_analogy_set(path: Path, form: Form = "paper") -> AnalogySet:
    """The analogy set in the TSV file `path`; raise `DataError` naming the file and line of
    the first problem (not UTF-8, too few or too many columns, an empty cell, an unknown
    header column, an invalid relation, no items at all)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise DataError(f"{path}: analogy set not found") from None
    except OSError as exc:
        raise DataError(f"{path}: cannot read it ({exc.strerror})") from None
    items = parse_analogy_rows(_lines(path, data), str(path))
    return AnalogySet(name=path.name, source=str(path), form=form, items=tuple(items))


def _lines(path: Path, data: bytes) -> list[str]:
    lines = data.split(b"\n")
    text = []
    for number, raw in enumerate(lines, 1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DataError(f"{path}:{number}: not UTF-8 text ({exc.reason}); convert the file "
                            "to UTF-8") from None
        text.append(line.removesuffix("\r").removeprefix("\ufeff") if number == 1
                    else line.removesuffix("\r"))
    return text


def parse_analogy_rows(lines: Sequence[str], source: str) -> list[AnalogyItem]:
    """The items of an analogy set's lines (`source` names the file in errors)."""
    items: list[AnalogyItem] = []
    header: tuple[str, ...] | None = None
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        cells = [cell.strip() for cell in line.split("\t")]
        if not items and header is None and [c.lower() for c in cells[:3]] == ["a", "b", "c"]:
            header = _header(cells, source, number)
            continue
        items.append(_item(cells, header, source, number))
        if len(items) > MAX_ITEMS:
            raise DataError(f"{source}:{number}: more than {MAX_ITEMS} items; split the set")
    if not items:
        raise DataError(f"{source}: no analogy items; expected rows "
                        "a<TAB>b<TAB>c[<TAB>expected[<TAB>relation]] (docs/probes.md)")
    return items


def _header(cells: list[str], source: str, number: int) -> tuple[str, ...]:
    names = tuple(cell.lower() for cell in cells)
    if names != COLUMNS[:len(names)]:
        unknown = next((n for n, want in zip(names, COLUMNS) if n != want), names[-1])
        raise DataError(f"{source}:{number}: unknown or misplaced header column {unknown!r}; "
                        f"the columns are, in order: {', '.join(COLUMNS)}")
    return names


def _item(cells: list[str], header: tuple[str, ...] | None, source: str,
          number: int) -> AnalogyItem:
    where = f"{source}:{number}"
    if len(cells) < 3:
        hint = " (columns are separated by tabs, not spaces)" if "  " in cells[0] or (
            len(cells) == 1 and " " in cells[0]) else ""
        raise DataError(f"{where}: expected at least 3 tab-separated columns (a, b, c), got "
                        f"{len(cells)}{hint}")
    allowed = len(header) if header else len(COLUMNS)
    if len(cells) > allowed:
        raise DataError(f"{where}: {len(cells)} columns, at most {allowed} "
                        f"({', '.join(COLUMNS[:allowed])})")
    for name, cell in zip(COLUMNS[:3], cells):
        if not cell:
            raise DataError(f"{where}: column {name} is empty")
    expected = cells[3] if len(cells) > 3 and cells[3] else None
    relation = cells[4] if len(cells) > 4 and cells[4] else None
    if relation is not None and not RELATION.fullmatch(relation):
        raise DataError(f"{where}: invalid relation {relation[:40]!r}; a relation is a label of "
                        "letters, digits and - _ . : / + (no spaces), at most 64 characters")
    return AnalogyItem(cells[0], cells[1], cells[2], expected, relation, number)


def write_analogy_set(path: Path, items: Sequence[AnalogyItem], comment: str = "") -> None:
    """Write `items` as an analogy-set TSV with a header (and `comment` lines first)."""
    lines = [f"# {line}".rstrip() for line in comment.splitlines()]
    lines.append("\t".join(COLUMNS))
    lines += ["\t".join([item.a, item.b, item.c, item.expected or "", item.relation or ""])
              for item in items]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def generated_analogy_set(name: str, items: int | None = None, seed: int | None = None,
                          form: Form = "paper") -> AnalogySet:
    """The analogy set generator `name` makes (`harness.synthetic.analogies`; `items` and
    `seed` default to its own), its rows in `form`: (T(x), x, y) for the paper's, (x, T(x), y)
    for the classic form, T(y) expected either way."""
    from harness.synthetic.analogies import DEFAULT_ITEMS, DEFAULT_SEED, analogy_quads

    if name != "quickstart":
        raise ValueError(f"unknown analogy generator {name!r}")
    count = DEFAULT_ITEMS if items is None else items
    seed = DEFAULT_SEED if seed is None else seed
    rows = tuple(AnalogyItem(q.tx, q.x, q.y, q.ty, q.relation) if form == "paper"
                 else AnalogyItem(q.x, q.tx, q.y, q.ty, q.relation)
                 for q in analogy_quads(count, seed))
    return AnalogySet(name=f"{name} ({count} items, seed {seed})", source=f"generate: {name}",
                      form=form, items=rows)


def write_generated_set(path: Path, name: str = "quickstart", items: int | None = None,
                        seed: int | None = None, form: Form = "paper") -> AnalogySet:
    """Write the generated set as a TSV file (how benchmarks/probes/quickstart-analogies.tsv is
    made) and return it."""
    made = generated_analogy_set(name, items, seed, form)
    order = "a : b :: z : c, z = expected" if form == "paper" else "a : b :: c : d, d = expected"
    write_analogy_set(path, made.items, comment=(
        f"Sentence analogies of the {name} language, answers known by construction\n"
        f"(harness.synthetic.analogies): {made.name}, form {form} ({order}).\n"
        "Regenerate (in benchmarks/probes/): python -c 'from pathlib import Path; "
        "from harness.analyses.probes.analogies import write_generated_set; "
        f"write_generated_set(Path(\"{path.name}\"))'"))
    return made


def analogy_vectors(form: Form, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """The vectors to decode for rows (a, b, c): a - b + c (paper) or b - a + c (classic)."""
    return a - b + c if form == "paper" else b - a + c


def solve_analogies(analogy_set: AnalogySet, encode: Callable[[list[str]], np.ndarray],
                    decode: Callable[[np.ndarray], list[str]]) -> list[str]:
    """The decoded answer of every item: each distinct sentence encoded once, every query
    vector decoded in one batch."""
    items = analogy_set.items
    sentences = list(dict.fromkeys(s for item in items for s in (item.a, item.b, item.c)))
    vectors = np.asarray(encode(sentences), dtype=np.float32)
    index = {sentence: row for row, sentence in enumerate(sentences)}

    def rows(part: str) -> np.ndarray:
        return vectors[[index[getattr(item, part)] for item in items]]

    return decode(analogy_vectors(analogy_set.form, rows("a"), rows("b"), rows("c")))


def score_analogies(analogy_set: AnalogySet, outputs: Sequence[str], *, examples: int = 1
                    ) -> tuple[AnalogySetResult, list[AnalogyOutput]]:
    """Each item's scores and the set's: overall and per relation type, with `examples`
    items of each relation type kept as examples."""
    if len(outputs) != len(analogy_set.items):
        raise ValueError(f"{len(outputs)} outputs for {len(analogy_set.items)} items")
    scored = [_scored(item, output) for item, output in zip(analogy_set.items, outputs)]
    groups: dict[str, list[AnalogyOutput]] = {}
    for output in scored:
        groups.setdefault(output.relation or "", []).append(output)
    relations = {name: _group(members) for name, members in groups.items() if name}
    shown = [member for members in groups.values() for member in members[:examples]]
    result = AnalogySetResult(name=analogy_set.name, source=analogy_set.source,
                              form=analogy_set.form, overall=_group(scored),
                              relations=relations, examples=shown)
    return result, scored


def _scored(item: AnalogyItem, output: str) -> AnalogyOutput:
    # An empty output is no sentence, let alone a new one.
    novel = not is_empty(output) and not any(same(output, s) for s in (item.a, item.b, item.c))
    if item.expected is None:
        return AnalogyOutput(a=item.a, b=item.b, c=item.c, relation=item.relation,
                             output=output, novel=novel)
    return AnalogyOutput(a=item.a, b=item.b, c=item.c, expected=item.expected,
                         relation=item.relation, output=output,
                         exact=same(output, item.expected),
                         bleu=sentence_bleu(output, item.expected), novel=novel)


def _group(members: Sequence[AnalogyOutput]) -> AnalogyGroup:
    expected = [m for m in members if m.expected is not None]
    return AnalogyGroup(
        items=len(members), expected=len(expected),
        accuracy=rate(sum(bool(m.exact) for m in expected), len(expected)) if expected else None,
        bleu=mean([m.bleu for m in expected if m.bleu is not None]),
        novel=rate(sum(m.novel for m in members), len(members)))
