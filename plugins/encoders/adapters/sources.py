"""Where each pretrained encoder's official files come from, and whether they are here.

The availability checks below are what `harness list` shows for infersent, quickthought and
laser. They take the component's options when the core passes them (a path given in the spec),
and otherwise read the environment variables; either way they only look at the file system.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .common import WeightsError, WeightsSource, is_pickle, pickle_refusal

if TYPE_CHECKING:
    from ..options import InferSentOptions, LaserOptions, QuickThoughtOptions

INFERSENT_URL = "https://dl.fbaipublicfiles.com/infersent/infersent2.pkl"
FASTTEXT_URL = "https://dl.fbaipublicfiles.com/fasttext/vectors-english/crawl-300d-2M.vec.zip"
QUICKTHOUGHT_URL = "https://github.com/lajanugen/S2V (MC-QT checkpoints: http://bit.ly/2ptSYXT)"
LASER_URL = "https://dl.fbaipublicfiles.com/laser/models/"

LASER_MODEL = "bilstm.93langs.2018-12-26"
LASER_CODES = "93langs.fcodes"
LASER_VOCAB = "93langs.fvocab"

INFERSENT_WEIGHTS = WeightsSource(
    "infersent", "weights", "HARNESS_INFERSENT_WEIGHTS",
    f"the InferSent encoder infersent2.pkl from {INFERSENT_URL}")
INFERSENT_WORD_VECTORS = WeightsSource(
    "infersent", "word_vectors", "HARNESS_INFERSENT_WORD_VECTORS",
    f"the fastText vectors crawl-300d-2M.vec (unzipped) from {FASTTEXT_URL}")
QUICKTHOUGHT_WEIGHTS = WeightsSource(
    "quickthought", "weights", "HARNESS_QUICKTHOUGHT_WEIGHTS",
    f"the MC-QT models of {QUICKTHOUGHT_URL} exported to .npz with docs/encoders.md's script")
LASER_WEIGHTS = WeightsSource(
    "laser", "weights", "HARNESS_LASER_WEIGHTS",
    f"a directory with {LASER_MODEL}.pt, {LASER_CODES} and {LASER_VOCAB} from {LASER_URL}")


def _pickle_problem(encoder: str, path: Path, allow_pickle: bool) -> str | None:
    if is_pickle(path) and not allow_pickle:
        return pickle_refusal(encoder, path).removeprefix(f"{encoder}: ")
    return None


def infersent_availability(options: InferSentOptions | None = None) -> str | None:
    """None when the InferSent weights and word vectors are here, else what to do."""
    weights = options.weights if options is not None else None
    words = options.word_vectors if options is not None else None
    problem = INFERSENT_WEIGHTS.missing(weights) or INFERSENT_WORD_VECTORS.missing(words)
    if problem is None and options is not None:
        path = INFERSENT_WEIGHTS.resolve(weights)
        assert path is not None
        problem = _pickle_problem("infersent", path, options.allow_pickle)
    return problem


def quickthought_availability(options: QuickThoughtOptions | None = None) -> str | None:
    """None when the exported QuickThought models are here, else what to do."""
    return QUICKTHOUGHT_WEIGHTS.missing(options.weights if options is not None else None)


def laser_files(weights: Path, codes: Path | None = None, vocab: Path | None = None
                ) -> tuple[Path, Path, Path | None]:
    """Return (model, BPE codes, BPE vocabulary) from the options, defaults beside the model.

    `weights` is the model file or the directory holding it; a `.safetensors` conversion is
    preferred to the released `.pt`. The vocabulary is optional (without it, BPE pieces are not
    restricted to the model's vocabulary).
    """
    weights = Path(weights)
    if weights.is_dir():
        directory = weights
        candidates = [directory / f"{LASER_MODEL}.safetensors", directory / f"{LASER_MODEL}.pt"]
        found = [c for c in candidates if c.exists()]
        if not found:
            raise WeightsError(f"laser: {directory} holds neither {LASER_MODEL}.pt nor "
                               f"{LASER_MODEL}.safetensors; download the .pt from {LASER_URL}")
        model = found[0]
    else:
        directory, model = weights.parent, weights
    codes = Path(codes) if codes is not None else directory / LASER_CODES
    if not codes.exists():
        raise WeightsError(f"laser: BPE codes {codes} not found; download {LASER_CODES} from "
                           f"{LASER_URL} beside the model or set option `bpe_codes:`")
    if vocab is None:
        vocab = directory / LASER_VOCAB if (directory / LASER_VOCAB).exists() else None
    elif not Path(vocab).exists():
        raise WeightsError(f"laser: BPE vocabulary {vocab} not found; download {LASER_VOCAB} "
                           f"from {LASER_URL}")
    return model, codes, Path(vocab) if vocab is not None else None


def laser_availability(options: LaserOptions | None = None) -> str | None:
    """None when the LASER model and its BPE codes are here, else what to do."""
    weights = options.weights if options is not None else None
    problem = LASER_WEIGHTS.missing(weights)
    if problem is not None:
        return problem
    path = LASER_WEIGHTS.resolve(weights)
    assert path is not None
    try:
        model, _, _ = laser_files(path, *((options.bpe_codes, options.bpe_vocab)
                                          if options is not None else (None, None)))
    except WeightsError as exc:
        return str(exc).removeprefix("laser: ")
    if options is not None:
        return _pickle_problem("laser", model, options.allow_pickle)
    return None
