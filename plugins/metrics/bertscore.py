"""BERTScore of regenerated sentences against their inputs, through the bert-score package.

BERTScore (Zhang et al. 2020, eqs. 1-3) greedily matches each token of one sentence to its most
cosine-similar token of the other in a chosen layer of a BERT-family model: recall averages over
the reference's tokens, precision over the hypothesis', F1 is their harmonic mean. Not among the
paper's diagnostics; offered as a second soft metric next to MoverScore. Scoring is delegated to
`bert_score.BERTScorer` unchanged (no idf weighting, no baseline rescaling unless asked).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from harness.plugin import DataError

from .mover import quiet_loading, resolve_backbone

COMPONENTS = ("F", "P", "R")
COMPONENTS_ORDER = ("P", "R", "F")
"""The order of bert-score's outputs and baseline values."""
MINILM_LAYERS = 5
"""Layer used with the 6-layer MiniLM backbone: bert-score's choice for 6-layer distilled BERTs
(`model2layers["distilbert-base-uncased"] == 5`), i.e. one below the top."""


def local_model(model: str, allow_download: bool = False, *, metric: str = "bertscore") -> str:
    """Return a local directory holding `model` (a backbone name, hub name or directory).

    bert-score loads by name and would reach the hub; resolving to a local snapshot first keeps
    a run offline unless `allow_download`. A failure is one `DataError` line naming `metric`,
    the backbone and the option to set.
    """
    source = resolve_backbone(model)
    if Path(source).is_dir():
        return source
    from huggingface_hub import snapshot_download

    try:
        return snapshot_download(model, local_files_only=not allow_download)
    except Exception as exc:  # the hub raises several error types for a missing snapshot
        hint = ("" if allow_download else
                f" and downloads are off; set `allow_download: true` in the {metric} options "
                "to fetch it once, or give a local directory")
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DataError(f"{metric}: cannot find backbone {model!r} in the local Hugging Face "
                        f"cache{hint}: {first}") from None


def packaged_baseline(model: str, lang: str) -> Path:
    """Return the rescaling baseline bert-score ships for the hub backbone `model` in `lang`."""
    import bert_score

    if model == "minilm":
        raise DataError("bert-score ships no rescaling baseline for the MiniLM backbone: give "
                        "`baseline_path` or leave `rescale_with_baseline` off")
    path = Path(bert_score.__file__).parent / "rescale_baseline" / lang / f"{model}.tsv"
    if not path.is_file():
        raise DataError(f"bert-score ships no rescaling baseline for {model!r} in {lang!r} "
                        f"(looked for {path}): give `baseline_path` or leave "
                        "`rescale_with_baseline` off")
    return path


def default_layers(model: str) -> int:
    """Return bert-score's recommended layer for a backbone (5 for the default MiniLM)."""
    if model == "minilm":
        return MINILM_LAYERS
    from bert_score.utils import model2layers

    if model not in model2layers:
        raise DataError(f"bert-score has no recommended layer for {model!r}: set the metric "
                        "option `num_layers`")
    return int(model2layers[model])


class BertScoreMetric:
    """BERTScore (0-100) of each hypothesis against its reference: F1, precision or recall.

    Statistics per pair: [score], so the corpus score is 100 times their mean.
    """

    def __init__(self, model: str = "minilm", *, num_layers: int | None = None,
                 component: str = "F", rescale_with_baseline: bool = False,
                 baseline_path: str | None = None, lang: str = "en", batch_size: int = 64,
                 device: str = "cpu", allow_download: bool = False) -> None:
        from bert_score import BERTScorer

        if component not in COMPONENTS:
            raise ValueError(f"unknown component {component!r}; choose one of "
                             f"{', '.join(COMPONENTS)}")
        if rescale_with_baseline and baseline_path is None:
            # bert-score would look the baseline up under the local snapshot's path, not the
            # backbone's name: find it by name here, before anything is scored.
            baseline_path = str(packaged_baseline(model, lang))
        # The backbone first: a model that is not here is the first thing to say.
        self.model_path = local_model(model, allow_download)
        self.model_name = model
        self.component = component
        self.num_layers = num_layers if num_layers is not None else default_layers(model)
        with quiet_loading():
            self.scorer = BERTScorer(model_type=self.model_path, num_layers=self.num_layers,
                                     batch_size=batch_size, device=device, lang=lang,
                                     rescale_with_baseline=rescale_with_baseline,
                                     baseline_path=baseline_path)

    def sentence_statistics(self, references: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
        """Return an (n, 1) array of per-pair BERTScores (the chosen component, 0-1 scale)."""
        if len(references) != len(hypotheses):
            raise ValueError(f"got {len(references)} references but {len(hypotheses)} "
                             "hypotheses; each hypothesis needs exactly one reference")
        rows = np.zeros((len(references), 1))
        # bert-score scores a pair with an empty side 0 ("setting raw BERTScores to 0"), but
        # with transformers >= 5 it fails on empty text before getting there; so those pairs
        # are scored here, as bert-score intends, and never handed to it.
        scored = [i for i, (r, h) in enumerate(zip(references, hypotheses))
                  if r.strip() and h.strip()]
        if scored:
            precision, recall, f1 = self.scorer.score([hypotheses[i] for i in scored],
                                                      [references[i] for i in scored])
            chosen = {"P": precision, "R": recall, "F": f1}[self.component]
            # Cosines computed in float32 land up to ~1e-7 above their bound of 1.
            rows[scored, 0] = np.minimum(chosen.double().cpu().numpy(), 1.0)
        if len(scored) < len(references) and self.scorer.rescale_with_baseline:
            baseline = float(self.scorer.baseline_vals[COMPONENTS_ORDER.index(self.component)])
            empty = np.setdiff1d(np.arange(len(references)), scored)
            rows[empty, 0] = (0.0 - baseline) / (1.0 - baseline)
        return rows

    def corpus_score(self, totals: np.ndarray, count: int) -> np.ndarray:
        """Return 100 * mean BERTScore for totals (..., 1), over any leading batch dims."""
        if count <= 0:
            raise ValueError(f"count must be positive, got {count}")
        return 100.0 * np.asarray(totals, dtype=np.float64)[..., 0] / count
