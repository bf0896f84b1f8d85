"""Gain over the floor: each diagnostic as what an encoder adds to what the decoder manages on
its own, from a vector carrying no information (the control encoder random-gaussian)."""

from __future__ import annotations

from harness.report.model import (
    Section,
    Table,
    digits_for,
    fmt,
    fmt_interval,
    fmt_p,
    higher_is_better,
    join_names,
    rank_by,
)
from harness.results import RunResults


def _value(results: RunResults, encoder: str, decoder: str, metric: str) -> float | None:
    for run in results.runs:
        if run.encoder == encoder and run.decoder == decoder and metric in run.metrics:
            return run.metrics[metric].value
    return None


def floor_section(results: RunResults) -> Section | None:
    """Per decoder, one table: per diagnostic and encoder its value, the floor's, the gain and
    its paired-bootstrap interval."""
    floor = results.floor
    if floor is None or not floor.gains:
        return None
    direction = higher_is_better(results)
    text = [f"The control encoder {floor.encoder} hands the decoder a random vector that says "
            "nothing about the sentence, so its diagnostics are what the decoder manages on its "
            "own (frequent words, a typical length): the floor. An encoder's gain over the "
            f"floor is its value minus {floor.encoder}'s, same decoder; its 95% interval comes "
            f"from {floor.resamples} paired bootstrap resamples of the test sentences (both "
            "scored on the same resampled sentences"
            + (", one decoder seed drawn per encoder: seed variance included"
               if floor.seeds else "") + "). An interval that excludes 0 means the vector "
            "carries something the diagnostic sees; where lower is better (ppl) a negative "
            "gain is the improvement."]
    wanted = rank_by(results)
    tables = []
    for decoder, by_diagnostic in floor.gains.items():
        rows = []
        for diagnostic, gains in by_diagnostic.items():
            digits = digits_for(direction.get(diagnostic, True))
            floor_value = _value(results, floor.encoder, decoder, diagnostic)
            rows += [[diagnostic, encoder,
                      fmt(_value(results, encoder, decoder, diagnostic), digits),
                      fmt(floor_value, digits), fmt(gain.gain, digits),
                      fmt_interval(gain.ci95, digits) or "–", fmt_p(gain.p),
                      "–" if gain.gain is None else "yes" if gain.significant else "no"]
                     for encoder, gain in gains.items()]
            level = [encoder for encoder, gain in gains.items()
                     if gain.gain is not None and not gain.significant]
            if diagnostic == wanted and level:
                text.append(f"- {decoder}, {diagnostic}: {join_names(level)} "
                            f"{'is' if len(level) == 1 else 'are'} not distinguishable from "
                            "the floor.")
        tables.append(Table(f"Decoder {decoder}: floor {floor.encoder}",
                            ["diagnostic", "encoder", "value", "floor", "gain",
                             "95% interval", "p", "interval excludes 0"], rows))
    return Section("Gain over the floor", text, tables=tables)
