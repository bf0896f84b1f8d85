"""`check_encoder`: what the core relies on an `Encoder` for."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from harness.protocols import Encoder, TrainableEncoder, is_positional
from harness.testing.failures import DEFAULT_SENTENCES, fail, max_difference, name_of


def _encode_checked(encoder: Any, sentences: list[str], dim: int, call: str,
                    batch_size: int | None = None, **position: Any) -> np.ndarray:
    """Return `encoder.encode(...)` after checking type, shape, dtype and finiteness;
    `position` is `split` and `start` for a positional encoder."""
    name = name_of(encoder)
    try:
        output = (encoder.encode(sentences, **position) if batch_size is None
                  else encoder.encode(sentences, batch_size=batch_size, **position))
    except Exception as exc:
        raise fail(f"{name}.{call} raised {type(exc).__name__}: {exc}",
                   "encode(sentences, batch_size=256) must accept any list of strings, "
                   "including an empty list") from exc
    if not isinstance(output, np.ndarray):
        raise fail(f"{name}.{call} returned {type(output).__name__}, not a numpy array",
                   "return np.asarray(...) of floats (convert torch tensors with "
                   ".detach().cpu().numpy())")
    expected = (len(sentences), dim)
    if output.shape != expected:
        raise fail(f"{name}.{call} returned shape {output.shape}, expected {expected} "
                   f"({len(sentences)} sentences x dim {dim})",
                   "return one row per input sentence, each of length `dim`")
    if not np.issubdtype(output.dtype, np.floating):
        raise fail(f"{name}.{call} returned dtype {output.dtype}",
                   "return a floating-point array (float32 is usual)")
    finite = np.isfinite(output)
    if not finite.all():
        row = int(np.flatnonzero(~finite.all(axis=1))[0])
        raise fail(f"{name}.{call} returned a non-finite value (NaN or inf) in row {row}, "
                   f"sentence {sentences[row]!r}",
                   "guard divisions (e.g. normalising a zero vector, averaging zero tokens)")
    return output


def check_encoder(encoder: Any, sentences: Sequence[str] | None = None, *,
                  rtol: float = 1e-4, atol: float = 1e-5) -> None:
    """Return None if `encoder` behaves as the core expects of an `Encoder`; else raise.

    Checks that it satisfies the `harness.protocols.Encoder` protocol; `dim` is a positive int;
    `fingerprint()` is a non-empty string, the same on every call; `encode` returns a finite
    float array of shape (n, dim); encoding is deterministic; the result does not depend on
    `batch_size`, on the order of the sentences or on which other sentences share the batch; an
    empty list gives shape (0, dim). A `TrainableEncoder` must be fitted before the check; its
    `save`/`load` round trip must give the same vectors.

    A positional encoder (`harness.protocols.PositionalEncoder`, `is_positional`) is checked as
    the encode stage calls it instead: for each split, encoding with `split` and `start` is
    deterministic and gives the same rows in one call as in several calls with the right starts
    and any `batch_size`; a plain `encode(sentences)` gives vectors of the right shape that are
    not a split's rows.

    `sentences` defaults to `DEFAULT_SENTENCES`; `rtol`/`atol` bound the numerical differences
    allowed between batchings (padding in batched models may cause tiny ones).
    """
    name = name_of(encoder)
    if not isinstance(encoder, Encoder):
        missing = [m for m in ("dim", "fingerprint", "encode") if not hasattr(encoder, m)]
        raise fail(f"{name} does not implement harness.protocols.Encoder (missing: "
                   f"{', '.join(missing) or 'nothing by name, but the protocol check failed'})",
                   "give it a `dim` property, `fingerprint() -> str` and "
                   "`encode(sentences, batch_size=256) -> np.ndarray`")
    sentences = list(DEFAULT_SENTENCES if sentences is None else sentences)
    if len(sentences) < 2:
        raise ValueError("check_encoder needs at least two sentences")

    dim = encoder.dim
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim <= 0:
        raise fail(f"{name}.dim is {dim!r}", "`dim` must be a positive int (for a trainable "
                   "encoder, known once fitted: call fit before check_encoder)")
    dim = int(dim)

    fingerprint = encoder.fingerprint()
    if not isinstance(fingerprint, str) or not fingerprint.strip():
        raise fail(f"{name}.fingerprint() returned {fingerprint!r}",
                   "return a non-empty string identifying options, weights and plugin version: "
                   "the cache keys encoded vectors on it")
    if encoder.fingerprint() != fingerprint:
        raise fail(f"{name}.fingerprint() changed between two calls",
                   "derive it only from options, weights identity and version (no time, "
                   "random numbers or object ids), or the cache never hits")

    # What the save/load round trip compares: the vectors as the encode stage asks for them.
    position: dict[str, Any] = {}
    if is_positional(encoder):
        position = {"split": "train", "start": 0}
        reference = _check_positional(encoder, sentences, dim, rtol, atol)
    else:
        reference = _check_batching(encoder, sentences, dim, rtol, atol)

    _encode_checked(encoder, [], dim, "encode([])")

    if isinstance(encoder, TrainableEncoder):
        with tempfile.TemporaryDirectory() as directory:
            encoder.save(Path(directory))
            encoder.load(Path(directory))
        restored = _encode_checked(encoder, sentences, dim, "encode(sentences) after save/load",
                                   **position)
        if not np.allclose(reference, restored, rtol=rtol, atol=atol):
            raise fail(f"{name}: vectors change after save() then load() (up to "
                       f"{max_difference(reference, restored):.3g})",
                       "save every fitted parameter and restore it exactly in load()")


def _check_batching(encoder: Any, sentences: list[str], dim: int, rtol: float, atol: float
                    ) -> np.ndarray:
    """Return the vectors of `sentences` after checking that a plain encoder's `encode` is
    deterministic and independent of batch size, order and batch mates."""
    name = name_of(encoder)
    reference = _encode_checked(encoder, sentences, dim, "encode(sentences)")
    again = _encode_checked(encoder, sentences, dim, "encode(sentences) (second call)")
    if not np.allclose(reference, again, rtol=rtol, atol=atol):
        raise fail(f"{name}.encode is not deterministic: two calls on the same sentences "
                   f"differ by up to {max_difference(reference, again):.3g}",
                   "put the model in eval mode (no dropout) and seed any sampling")

    for batch_size in (1, 3, 64):
        batched = _encode_checked(encoder, sentences, dim,
                                  f"encode(sentences, batch_size={batch_size})", batch_size)
        if not np.allclose(reference, batched, rtol=rtol, atol=atol):
            raise fail(f"{name}.encode depends on batch_size: batch_size={batch_size} differs "
                       f"from the default by up to {max_difference(reference, batched):.3g}",
                       "encode each batch independently and mask padding so it does not "
                       "change the vectors")

    order = list(reversed(range(len(sentences))))
    reordered = _encode_checked(encoder, [sentences[i] for i in order], dim,
                                "encode(reversed sentences)")
    if not np.allclose(reference[order], reordered, rtol=rtol, atol=atol):
        raise fail(f"{name}.encode depends on the order of the sentences (reversing the list "
                   f"changes rows by up to {max_difference(reference[order], reordered):.3g})",
                   "a sentence's vector must depend on that sentence only (no batch statistics)")
    for row, sentence in enumerate(sentences):
        alone = _encode_checked(encoder, [sentence], dim, f"encode([{sentence!r}])")
        if not np.allclose(reference[row], alone[0], rtol=rtol, atol=atol):
            raise fail(f"{name}.encode gives {sentence!r} a different vector alone than in a "
                       f"batch with other sentences (up to "
                       f"{max_difference(reference[row], alone[0]):.3g})",
                       "a sentence's vector must depend on that sentence only (no batch "
                       "normalisation, shared padding lengths must be masked)")
    return reference


def _check_positional(encoder: Any, sentences: list[str], dim: int, rtol: float, atol: float
                      ) -> np.ndarray:
    """Return the train split's vectors of `sentences` (rows 0, 1, ...) after checking that a
    positional encoder gives each split's rows whatever the batching, as the encode stage
    (which resumes at any batch) needs, and answers plain calls apart from the splits."""
    name = name_of(encoder)
    references = {}
    for split in ("train", "test"):
        call = f"encode(sentences, split={split!r}, start=0)"
        reference = _encode_checked(encoder, sentences, dim, call, split=split, start=0)
        again = _encode_checked(encoder, sentences, dim, f"{call} (second call)",
                                split=split, start=0)
        if not np.allclose(reference, again, rtol=rtol, atol=atol):
            raise fail(f"{name}.{call} is not deterministic: two calls differ by up to "
                       f"{max_difference(reference, again):.3g}",
                       "derive a row's vector from the seed, the split and the row only")
        for batch_size in (1, 3, 64):
            batched = np.concatenate([
                _encode_checked(encoder, sentences[begin:begin + batch_size], dim,
                                f"encode(sentences[{begin}:{begin + batch_size}], "
                                f"batch_size={batch_size}, split={split!r}, start={begin})",
                                batch_size, split=split, start=begin)
                for begin in range(0, len(sentences), batch_size)])
            if not np.allclose(reference, batched, rtol=rtol, atol=atol):
                raise fail(f"{name}.encode with split={split!r} depends on the batching: "
                           f"batches of {batch_size} with their starts differ from one call "
                           f"by up to {max_difference(reference, batched):.3g}",
                           "give row `start + i` of the split the same vector whichever call "
                           "encodes it (the encode stage resumes a killed run at any batch)")
        references[split] = reference

    plain = _encode_checked(encoder, sentences, dim, "encode(sentences)")
    for split, reference in references.items():
        if np.allclose(reference, plain, rtol=rtol, atol=atol):
            raise fail(f"{name}.encode(sentences) without a split gives the {split} split's "
                       "rows 0, 1, ...",
                       "answer calls without a split from a stream of their own: they encode "
                       "other sentences (metrics re-encode outputs), not the corpus' rows")
    return references["train"]
