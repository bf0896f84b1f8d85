"""Bag-of-tokens precision, recall and F1 of the output against its input: the `token-f1`
metric, as current inversion work reports it next to BLEU and exact match.

Per pair, with the multiset overlap of whitespace tokens
`overlap = sum_t min(count_hyp(t), count_ref(t))` (SQuAD's F1, Rajpurkar et al. 2016):
precision = overlap / |hyp|, recall = overlap / |ref|, F1 = 2PR / (P + R). The corpus score
is 100 x the mean F1 over sentences (vec2text's "token F1", Morris et al. 2023, is the same
per-sentence mean). A repeated token counts as often as it occurs in both: "the the cat" against
"the cat" has overlap 2, precision 2/3, recall 1.

Edge cases, as the SQuAD 2.0 evaluation script (`compute_f1`): when either side is empty, F1 is
1 if both are and 0 otherwise; an empty output has precision and recall 0 against a non-empty
input. Where overlap is 0, precision, recall and F1 are 0.

Tokens are the whitespace tokens of the text as compared (`token-f1`, so that its numbers line
up with Id and PERM), or for `token-f1:content`, the privacy analysis's measure, sacrebleu's
`13a` tokens, which split punctuation off words ("plane." then counts as "plane";
`harness.text.words`; its option `tokenize: whitespace` counts whitespace tokens). The text is the
normalised one by default; `text: raw` and `token-f1:raw` compare with the corpus text before
normalisation.

Departures from what inversion papers compute:
- no punctuation or article stripping (SQuAD strips them; `token-f1:content` leaves out
  function words and punctuation tokens) and no nltk tokenisation (vec2text, GEIA use it);
- vec2text counts token *sets* (`token_set_f1`: a repeated token counts once) and adds 1e-20
  to every denominator, so two empty sentences score 0; GEIA (Li et al. 2023) pools word
  precision and recall over the whole corpus (micro) before taking F1, counting a hypothesis
  token as recovered whenever the reference contains it at all.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from harness.plugin import Tokenize, words

from .overlap import ReferenceText

FUNCTION_WORDS: frozenset[str] = frozenset("""
a an the this that these those some any no every each all both either neither
i you he she it we they me him her us them my your his its our their mine yours hers ours
theirs myself yourself himself herself itself ourselves themselves who whom whose which what
of in on at by for with from to into onto upon about over under between among through during
before after above below up down out off than as like via per
and or but nor so yet if because while although though whether
is am are was were be been being have has had having do does did done
will would shall should can could may might must not n't 's
there here then too very also just only even
. , ; : ! ? - -- ' " ( ) [ ] ...
""".split())
"""The closed-class words `token-f1:content` leaves out, written for the harness: determiners,
pronouns, prepositions, conjunctions, auxiliaries, a few adverbs, and punctuation tokens (the
normalised text is lower-cased; a raw capital counts as content)."""

COLUMNS = ("precision", "recall", "f1")
"""The per-pair statistics, in column order; the corpus score is the mean of the last."""


def content_tokens(text: str, tokenize: Tokenize = "whitespace") -> list[str]:
    """The tokens of `text` (`harness.text.words`) that are not in `FUNCTION_WORDS`."""
    return [token for token in words(text, tokenize) if token not in FUNCTION_WORDS]


def token_prf(reference: str, hypothesis: str, *, content: bool = False,
              tokenize: Tokenize = "whitespace") -> tuple[float, float, float]:
    """Return (precision, recall, F1) of the hypothesis' token multiset against the
    reference's (module docstring: 1, 1, 1 when both are empty), tokens as `tokenize` splits
    them; with `content`, of their content words only (`content_tokens`: what an inversion
    reveals beyond the function words every sentence has)."""
    if content:
        ref, hyp = content_tokens(reference, tokenize), content_tokens(hypothesis, tokenize)
    else:
        ref, hyp = words(reference, tokenize), words(hypothesis, tokenize)
    if not ref or not hyp:
        same = float(not ref and not hyp)
        return same, same, same
    overlap = sum((Counter(ref) & Counter(hyp)).values())
    if overlap == 0:
        return 0.0, 0.0, 0.0
    precision, recall = overlap / len(hyp), overlap / len(ref)
    return precision, recall, 2 * precision * recall / (precision + recall)


class TokenF1Metric(ReferenceText):
    """Token F1: 100 x the mean over sentences of the bag-of-tokens F1 (module docstring); with
    `content`, of the content words only (`token-f1:content`).

    Statistics per pair: [precision, recall, F1], each in [0, 1]; the means of the first two
    are the corpus' token precision and recall. The interval is the percentile bootstrap over
    sentences, as for every mean."""

    value_range = (0.0, 100.0)  # an interval widened by the seeds' spread stays inside

    def __init__(self, text: str = "normalised", content: bool = False,
                 tokenize: Tokenize = "whitespace") -> None:
        super().__init__(text)
        self.content, self.tokenize = content, tokenize

    def sentence_statistics(self, references: Sequence[str], hypotheses: Sequence[str],
                            reference_raw: Sequence[str] | None = None) -> np.ndarray:
        """Return an (n, 3) array of [precision, recall, F1] per pair."""
        if len(references) != len(hypotheses):
            raise ValueError(f"got {len(references)} references but {len(hypotheses)} "
                             "hypotheses; each hypothesis needs exactly one reference")
        references = self._references(references, reference_raw)
        rows = np.zeros((len(references), len(COLUMNS)), dtype=np.float64)
        for i, (reference, hypothesis) in enumerate(zip(references, hypotheses)):
            rows[i] = token_prf(reference, hypothesis, content=self.content,
                                tokenize=self.tokenize)
        return rows

    def corpus_score(self, totals: np.ndarray, count: int) -> np.ndarray:
        """Return 100 x the mean F1, totals[..., 2] / count, over any leading batch dims."""
        if count <= 0:
            raise ValueError(f"count must be positive, got {count}")
        return 100.0 * np.asarray(totals, dtype=np.float64)[..., 2] / count

    def signature(self) -> str:
        """The configuration scored with, recorded beside the score."""
        words = "|words:content" if self.content else ""
        return (f"tokens:{self.tokenize}|bag:multiset|text:{self.text}{words}|empty-pair:1|"
                "mean:sentence")
