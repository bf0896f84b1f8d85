"""What the length-gap analysis writes to results.json: the field `length_gaps` it declares
(`AnalysisParts.results`), typed by the models below, and how a command or a later run reads
it back from a run directory (`read_gaps`)."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.plugin import DataError

FIELD = "length_gaps"
"""The results.json top-level field the analysis fills."""


class PairGap(BaseModel):
    """How long one encoder x decoder pair's regenerated sentences are against their inputs,
    in whitespace tokens."""

    model_config = ConfigDict(frozen=True)

    mean_gap: float = Field(description="mean of (output tokens - input tokens)")
    shorter: float = Field(ge=0, le=100, description="% of outputs shorter than their input")
    n: int = Field(ge=0, description="sentence pairs measured")


class LengthGaps(BaseModel):
    """results.json `length_gaps`: encoder -> decoder -> its `PairGap`, and the same of the
    baseline run the spec's `length_gap.baseline` names (empty without one)."""

    model_config = ConfigDict(frozen=True)

    pairs: dict[str, dict[str, PairGap]] = {}
    baseline: dict[str, dict[str, PairGap]] = {}


def read_gaps(run_dir: Path) -> LengthGaps:
    """The length gaps in `run_dir`/results.json; a `DataError` naming the file when it is
    missing, is not JSON, or holds no length gaps (its run did not run the analysis)."""
    path = Path(run_dir) / "results.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, NotADirectoryError):
        raise DataError(f"{path}: not found; is {run_dir} a run directory?") from None
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}:{exc.lineno}: malformed JSON: {exc.msg}") from None
    gaps = data.get(FIELD) if isinstance(data, dict) else None
    if gaps is None:
        raise DataError(f"{path}: no `{FIELD}`: its run did not run example-length-gap")
    try:
        return LengthGaps.model_validate(gaps)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise DataError(f"{path}: {FIELD}.{where}: {first['msg']}") from None


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
            rows.append(row)
    return rows


def gap_header(gaps: LengthGaps) -> list[str]:
    """The header of `gap_rows`."""
    return ["encoder", "decoder", "mean gap", "% shorter", "n",
            *(["baseline gap"] if gaps.baseline else [])]
