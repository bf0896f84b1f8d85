"""Perplexity of the test sentences under the decoder (teacher-forced), the `ppl` metric.

Unlike the other metrics it does not compare the generated sentence with its input: it reads
the per-sentence negative log-likelihood of the input given its vector, which the generate stage
records in each sample (`nll`, nats, and `tokens`, eos included;
`harness.generation.perplexity.reference_nll`). Perplexity is exp(sum nll / sum tokens): lower
is better, 1 is perfect, and it is NOT on the 0-100 scale of the other metrics.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from harness.plugin import DataError

NLL_TOLERANCE = 1e-4
"""Nats per token an NLL may fall below 0 by rounding before a sample is refused."""


class PerplexityMetric:
    """Corpus perplexity exp(sum_i nll_i / sum_i tokens_i) from rows [nll_i, tokens_i]."""

    requires: tuple[str, ...] = ("nll", "tokens")
    higher_is_better = False

    def sentence_statistics(self, references: Sequence[str], hypotheses: Sequence[str], *,
                            nll: Sequence[float] | None = None,
                            tokens: Sequence[int] | None = None) -> np.ndarray:
        """Return the (n, 2) rows [summed NLL in nats, token count] of each test sentence."""
        if nll is None or tokens is None:
            raise DataError("metric 'ppl' needs the sample fields 'nll' and 'tokens' (the "
                            "decoder's teacher-forced NLL of each input); rerun the generate "
                            "stage of a harness version that records them")
        rows = np.column_stack([np.asarray(nll, dtype=np.float64),
                                np.asarray(tokens, dtype=np.float64)]).reshape(-1, 2)
        if len(rows) != len(references):
            raise DataError(f"metric 'ppl': {len(rows)} nll/tokens values for "
                            f"{len(references)} sentences")
        # A mixture's logsumexp may give a near-certain subword a log-probability of +1e-7.
        bad = (~np.isfinite(rows).all(axis=1) | (rows[:, 1] < 1)
               | (rows[:, 0] < -NLL_TOLERANCE * rows[:, 1]))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise DataError(f"metric 'ppl': sample {i} has nll={rows[i, 0]} and "
                            f"tokens={rows[i, 1]}; expected a finite nll >= 0 and tokens >= 1")
        return rows

    def corpus_score(self, totals: np.ndarray, count: int) -> np.ndarray:
        """Return the perplexity exp(totals[..., 0] / totals[..., 1]) (vectorised)."""
        totals = np.asarray(totals, dtype=np.float64)
        return np.exp(totals[..., 0] / totals[..., 1])
