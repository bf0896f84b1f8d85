"""Applying LASER's BPE codes (fastBPE format) to tokenised text, without fastBPE installed.

Byte-pair encoding (Sennrich et al. 2016) as fastBPE and subword-nmt (format 0.2) apply it: a
word is split into characters, the last one marked with `</w>`; the adjacent pair whose merge was
learnt earliest is merged, everywhere in the word, until no learnt merge applies. Pieces that are
not in the model's vocabulary are split back along their merges. Every piece but a word's last
carries the `@@` continuation marker ("hello" -> "hel@@ lo").
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from .common import WeightsError

END_OF_WORD = "</w>"
SEPARATOR = "@@"


def read_codes(path: Path) -> dict[tuple[str, str], int]:
    """Return each learnt merge (left, right) with its rank (0 = learnt first).

    fastBPE writes `left right count` per line; subword-nmt writes `left right` (after an
    optional `#version` line). Both are accepted.
    """
    codes: dict[tuple[str, str], int] = {}
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            parts = line.rstrip("\r\n").split(" ")
            if number == 1 and line.startswith("#version"):
                continue
            if len(parts) not in (2, 3) or not parts[0] or not parts[1]:
                raise WeightsError(f"{path}:{number}: expected 'left right [count]' BPE codes, "
                                   f"got {line.strip()[:60]!r}")
            codes.setdefault((parts[0], parts[1]), len(codes))
    return codes


def read_vocabulary(path: Path) -> set[str]:
    """Return the pieces listed in a fastBPE vocabulary file (`piece count` per line)."""
    with open(path, encoding="utf-8") as handle:
        return {line.split(" ", 1)[0] for line in handle if line.strip()}


class BytePairEncoder:
    """Segments words into the pieces of a learnt BPE model, restricted to its vocabulary."""

    def __init__(self, codes: dict[tuple[str, str], int], vocabulary: set[str] | None = None
                 ) -> None:
        self.codes = codes
        self.vocabulary = vocabulary
        # merged piece -> the pair it was merged from, to split out-of-vocabulary pieces back
        self.reverse = {left + right: (left, right) for left, right in codes}
        self.segment = lru_cache(maxsize=1 << 16)(self._segment)

    def apply(self, tokens: list[str]) -> list[str]:
        """Return the pieces of a tokenised sentence, `@@`-marked except at word ends."""
        return [piece for token in tokens for piece in self.segment(token)]

    def _segment(self, word: str) -> tuple[str, ...]:
        symbols = self._merge(word)
        if self.vocabulary is not None:
            symbols = self._restrict(symbols)
        return tuple([s + SEPARATOR for s in symbols[:-1]] + symbols[-1:])

    def _merge(self, word: str) -> list[str]:
        """Merge the earliest-learnt pair until none applies; strip the final `</w>`."""
        symbols = list(word[:-1]) + [word[-1] + END_OF_WORD]
        while len(symbols) > 1:
            ranked = [(self.codes.get(pair, -1), pair) for pair in zip(symbols, symbols[1:])]
            ranked = [(rank, pair) for rank, pair in ranked if rank >= 0]
            if not ranked:
                break
            left, right = min(ranked)[1]
            merged: list[str] = []
            i = 0
            while i < len(symbols):
                if i + 1 < len(symbols) and symbols[i] == left and symbols[i + 1] == right:
                    merged.append(left + right)
                    i += 2
                else:
                    merged.append(symbols[i])
                    i += 1
            symbols = merged
        last = symbols[-1].removesuffix(END_OF_WORD)
        return symbols[:-1] + [last] if last else symbols[:-1]

    def _restrict(self, symbols: list[str]) -> list[str]:
        """Split pieces missing from the vocabulary back into known ones (subword-nmt rule)."""
        out: list[str] = []
        for index, symbol in enumerate(symbols):
            final = index == len(symbols) - 1
            out.extend(self._known(symbol, final))
        return out

    def _known(self, symbol: str, final: bool) -> list[str]:
        assert self.vocabulary is not None
        if (symbol if final else symbol + SEPARATOR) in self.vocabulary:
            return [symbol]
        key = symbol + END_OF_WORD if final else symbol
        if key not in self.reverse:
            return [symbol]  # a single character: kept, the model maps it to <unk>
        left, right = self.reverse[key]
        if final:
            right = right.removesuffix(END_OF_WORD)
        return self._known(left, False) + self._known(right, final)
