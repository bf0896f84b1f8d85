"""What the length-gap analysis writes to results.json: the field `length_gaps` it declares
(`AnalysisParts.results`), typed by the models below, and how a command or a later run reads
it back from a run directory (`read_gaps`)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from harness.plugin import DataError, JobRecord, load_results

FIELD = "length_gaps"
"""The results.json top-level field the analysis fills."""


class PairGap(BaseModel):
    """How long one encoder x decoder pair's regenerated sentences are against their inputs,
    in whitespace tokens."""

    model_config = ConfigDict(frozen=True)

    mean_gap: float = Field(description="mean of (output tokens - input tokens)")
    shorter: float = Field(ge=0, le=100, description="% of outputs shorter than their input")
    n: int = Field(ge=0, description="sentence pairs measured")


class RetrainedGap(PairGap):
    """The gap of a decoder trained again on the first `sentences` training sentences
    (`length_gap.retrain`), with its score on the spec's first metric (`metric`, `value`)."""

    sentences: int = Field(gt=0, description="training sentences of the retrained decoder")
    metric: str = Field(description="the spec's first metric")
    value: float | None = Field(description="its score of the retrained decoder's outputs")


class LengthGaps(BaseModel):
    """results.json `length_gaps`: encoder -> decoder -> its `PairGap`, the same of the
    baseline run the spec's `length_gap.baseline` names (empty without one), and of the
    decoders retrained on fewer sentences (`length_gap.retrain`; empty without)."""

    model_config = ConfigDict(frozen=True)

    pairs: dict[str, dict[str, PairGap]] = {}
    baseline: dict[str, dict[str, PairGap]] = {}
    retrained: dict[str, dict[str, RetrainedGap]] = {}


class RetrainedGaps(JobRecord):
    """What one encoder's length-gap job returns: decoder -> its retrained decoder's gap."""

    encoder: str
    gaps: dict[str, RetrainedGap] = {}


def read_gaps(run_dir: Path) -> LengthGaps:
    """The length gaps in `run_dir`/results.json, read by the harness (`load_results`: the
    field typed as this analysis declares it); a `DataError` naming the file when it is
    missing or malformed, or holds no length gaps (its run did not run the analysis)."""
    results = load_results(Path(run_dir))
    gaps = getattr(results, FIELD)
    if gaps is None:
        raise DataError(f"{Path(run_dir) / 'results.json'}: no `{FIELD}`: its run did not run "
                        "example-length-gap")
    return gaps


def gap_rows(gaps: LengthGaps, digits: int) -> list[list[str]]:
    """One row per pair, as the report and `harness length-gap` show it: encoder, decoder,
    mean gap (signed), % shorter, n, and the baseline's mean gap ("-" where it has no such
    pair) when there is a baseline."""
    rows = []
    for encoder, by_decoder in gaps.pairs.items():
        for decoder, gap in by_decoder.items():
            row = [encoder, decoder, f"{gap.mean_gap:+.{digits}f}",
                   f"{gap.shorter:.{digits}f}", str(gap.n)]
            if gaps.baseline:
                before = gaps.baseline.get(encoder, {}).get(decoder)
                row.append("-" if before is None else f"{before.mean_gap:+.{digits}f}")
            if gaps.retrained:
                again = gaps.retrained.get(encoder, {}).get(decoder)
                row.append("-" if again is None else f"{again.mean_gap:+.{digits}f}")
            rows.append(row)
    return rows


def gap_header(gaps: LengthGaps) -> list[str]:
    """The header of `gap_rows`."""
    retrained = {gap.sentences for by_decoder in gaps.retrained.values()
                 for gap in by_decoder.values()}
    return ["encoder", "decoder", "mean gap", "% shorter", "n",
            *(["baseline gap"] if gaps.baseline else []),
            *([f"gap at {', '.join(map(str, sorted(retrained)))} sentences"] if retrained
              else [])]
