"""How close the output's vector is to the input's under the encoder under test: the `cosine`
metric.

Each generated sentence is encoded again with the same encoder object that encoded the inputs
(fitted state and all, handed over by the core: `harness.protocols.EncoderAwareMetric`)
and compared with the vector the decoder generated it from: cos(e(y_i), x_i). The corpus score
is 100 x the mean cosine over sentences, in [-100, 100], with the percentile bootstrap
interval over sentences. This is vec2text's `emb_cos_sim` (Morris et al. 2023: the output
re-embedded by the inverted embedder) on the 0-100 scale of the other diagnostics; GEIA
(Li et al. 2023) instead embeds both sides with other, fixed sentence encoders, which
measures meaning rather than what the encoder under test keeps.

The output's vector is rounded to the dtype the input vectors were stored in (float16 under
`encode: {dtype: float16}`), so an output identical to its input scores exactly 100 for a
deterministic encoder. A zero vector has no direction: its cosine is defined as 0. An
encoder that draws its vectors at random (the `random-gaussian` control) scores about 0.

The chance level is the encoder's own: the mean cosine between each input vector and the vector
of an unrelated test sentence (`chance_statistics`). Mean-pooled word vectors give unrelated
sentences a cosine far above 0, so a high cosine says little until it is compared with that.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from harness.plugin import DataError, InputEncoding, row_cosines


class CosineMetric:
    """Cosine: 100 x the mean cosine between each re-encoded output and its input vector.

    Registered with `needs=("encoder",)`: the core passes `encoder=InputEncoding(...)` to
    `sentence_statistics`. Statistics per pair: [cosine], in [-1, 1]."""

    value_range = (-100.0, 100.0)  # an interval widened by the seeds' spread stays inside

    def sentence_statistics(self, references: Sequence[str], hypotheses: Sequence[str], *,
                            encoder: InputEncoding | None = None) -> np.ndarray:
        """Return an (n, 1) array: the cosine of each re-encoded hypothesis to its input."""
        if encoder is None:
            raise DataError("metric 'cosine' re-encodes the outputs with the encoder under test: "
                            "pass encoder=InputEncoding(...) (the score stage does, for metrics "
                            "registered with needs=('encoder',))")
        if len(references) != len(hypotheses):
            raise ValueError(f"got {len(references)} references but {len(hypotheses)} "
                             "hypotheses; each hypothesis needs exactly one reference")
        inputs = encoder.vectors
        if len(inputs) != len(hypotheses):
            raise DataError(f"metric 'cosine': {len(inputs)} input vectors of encoder "
                            f"{encoder.name!r} for {len(hypotheses)} sentences")
        if not len(hypotheses):
            return np.zeros((0, 1))
        outputs = np.asarray(encoder.encode(list(hypotheses)))
        # Stored the way the inputs were, so an exact regeneration gives the very same vector.
        outputs = outputs.astype(inputs.dtype, copy=False)
        return row_cosines(outputs, np.asarray(inputs))[:, None]

    def chance_statistics(self, encoder: InputEncoding, unrelated: np.ndarray) -> np.ndarray:
        """Return an (n, 1) array: the cosine of each input vector to the input vector of the
        unrelated sentence `unrelated[i]`, the encoder's chance level
        (`harness.protocols.ChanceLevelMetric`)."""
        inputs = np.asarray(encoder.vectors)
        if len(unrelated) != len(inputs):
            raise ValueError(f"got {len(unrelated)} pairings for {len(inputs)} input vectors")
        return row_cosines(inputs[np.asarray(unrelated)], inputs)[:, None]

    def corpus_score(self, totals: np.ndarray, count: int) -> np.ndarray:
        """Return 100 x the mean cosine, totals[..., 0] / count, over any leading batch dims."""
        if count <= 0:
            raise ValueError(f"count must be positive, got {count}")
        return 100.0 * np.asarray(totals, dtype=np.float64)[..., 0] / count
