"""A length-gap analysis: how much shorter or longer each pair's regenerated sentences are than
their inputs, read from the samples the jobs left in the cache."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.report.elements import Section, Table


def length_gaps(references: list[str], hypotheses: list[str]) -> dict[str, float]:
    """`mean_gap`: the mean of (hypothesis tokens - reference tokens), whitespace tokens;
    `shorter`: the percentage of hypotheses with fewer tokens than their reference; `n`: the
    number of pairs."""
    gaps = [len(h.split()) - len(r.split()) for r, h in zip(references, hypotheses)]
    n = len(gaps)
    return {"mean_gap": sum(gaps) / n if n else 0.0,
            "shorter": 100.0 * sum(gap < 0 for gap in gaps) / n if n else 0.0, "n": float(n)}


class LengthGapAnalysis:
    """Fills `analyses.<name>.pairs`: encoder -> decoder -> `length_gaps` of the first seed's
    samples; shows one table."""

    def __init__(self, name: str, digits: int) -> None:
        self.name, self.digits = name, digits

    def run(self, run: Any) -> Mapping[str, Any]:
        pairs: dict[str, dict[str, dict[str, float]]] = {}
        for outcome in run.execution.outcomes:
            for decoder, files in outcome.samples.items():
                records = [json.loads(line) for line in
                           Path(files[0]).read_text(encoding="utf-8").splitlines()]
                pairs.setdefault(outcome.encoder, {})[decoder] = length_gaps(
                    [r["reference"] for r in records], [r["hypothesis"] for r in records])
        return {"pairs": pairs}

    def sections(self, results: Any, figures: Mapping[str, bytes]) -> list[Section]:
        pairs = ((results.analyses or {}).get(self.name) or {}).get("pairs")
        if not pairs:
            return []
        rows = [[encoder, decoder, f"{gap['mean_gap']:+.{self.digits}f}",
                 f"{gap['shorter']:.{self.digits}f}", str(int(gap["n"]))]
                for encoder, by_decoder in pairs.items() for decoder, gap in by_decoder.items()]
        return [Section("Length gap (example plugin)",
                        ["Regenerated minus input length in whitespace tokens, and the share "
                         "of outputs shorter than their input, over the test sentences."],
                        tables=[Table("", ["encoder", "decoder", "mean gap", "% shorter", "n"],
                                      rows)])]

    def figures(self, results: Any) -> dict[str, bytes]:
        return {}
