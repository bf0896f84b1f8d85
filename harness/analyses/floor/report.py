"""Gain over the floor: each diagnostic as what an encoder adds to what the decoder manages on
its own, from a vector carrying no information (the control encoder random-gaussian), or, for a
diagnostic in the encoder's own space (cosine), over the encoder's own chance level."""

from __future__ import annotations

from harness.analyses.correlation.results import ranked_by
from harness.report.elements import (
    Section,
    Table,
    digits_for,
    fmt,
    fmt_interval,
    fmt_p,
    higher_is_better,
    join_names,
)
from harness.results.model import RunResults


def _score(results: RunResults, encoder: str, decoder: str, metric: str
           ) -> tuple[float | None, tuple[float | None, float | None]]:
    """The pair's value of `metric` and its 95% interval (None where the run has none)."""
    for run in results.runs:
        if run.encoder == encoder and run.decoder == decoder and metric in run.metrics:
            score = run.metrics[metric]
            return score.value, tuple(score.ci95)  # type: ignore[return-value]
    return None, (None, None)


def _chance_note(results: RunResults) -> list[str]:
    floor = results.floor
    if floor is None or not floor.chance:
        return []
    lines = []
    for metric, by_encoder in floor.chance.items():
        levels = "; ".join(f"{encoder} {fmt(score.value, 1)} {fmt_interval(score.ci95, 1)}"
                           for encoder, score in by_encoder.items())
        lines.append(f"The floor of {metric} is each encoder's own chance level, not the "
                     f"random vector's: its {metric} between a test sentence's vector and an "
                     "unrelated test sentence's (one fixed derangement of the test set), with "
                     f"its 95% interval: {levels}.")
    return lines


def floor_section(results: RunResults) -> Section | None:
    """Per decoder, one table: per diagnostic and encoder its value, the floor's, the gain and
    its paired-bootstrap interval."""
    floor = results.floor
    if floor is None or not floor.gains:
        return None
    direction = higher_is_better(results)
    text = []
    if floor.encoder:
        text.append(f"The control encoder {floor.encoder} hands the decoder a random vector "
                    "that says nothing about the sentence, so its diagnostics are what the "
                    "decoder manages on its own (frequent words, a typical length): the floor. "
                    f"An encoder's gain over the floor is its value minus {floor.encoder}'s, "
                    "same decoder.")
    text += _chance_note(results)
    text.append("Each gain is tested on the same test sentences, the sentence as the unit "
                "(McNemar's exact test for a rate with one seed, the exact sign-flip test with "
                "two, the paired permutation test otherwise; with three or more decoder seeds "
                "per encoder, Welch's t over test sentences and seeds, which includes training "
                "variance), and the tests of one decoder "
                "and diagnostic are Holm-corrected over the encoders; \"significant\" means "
                "after that correction. The 95% interval of the gain is the paired bootstrap "
                f"over {floor.resamples} resamples of the test sentences (uncorrected)"
                + ("; with fewer than three seeds, seeds are averaged per sentence: seed "
                   "variance not included" if floor.seeds else "")
                + ". Where lower is better (ppl) a negative gain is the improvement. The "
                "value's own 95% interval stands beside it: the gain over 0, which is what a "
                "vector with no information gives on info (bits over the unconditional model); "
                "the floor's info is below 0 by the noise its decoder fitted, so the gain over "
                "the floor counts that penalty too.")
    wanted = ranked_by(results)
    tables = []
    for decoder, by_diagnostic in floor.gains.items():
        rows = []
        for diagnostic, gains in by_diagnostic.items():
            digits = digits_for(direction.get(diagnostic, True))
            rows += [[diagnostic, encoder,
                      fmt(_score(results, encoder, decoder, diagnostic)[0], digits),
                      fmt_interval(_score(results, encoder, decoder, diagnostic)[1], digits)
                      or "–",
                      fmt(gain.floor, digits)
                      + (" (chance)" if gain.basis == "chance" else ""),
                      fmt(gain.gain, digits),
                      fmt_interval(gain.ci95, digits) or "–", fmt_p(gain.p),
                      fmt_p(gain.p_holm),
                      "–" if gain.gain is None else "yes" if gain.significant else "no"]
                     for encoder, gain in gains.items()]
            level = [encoder for encoder, gain in gains.items()
                     if gain.gain is not None and not gain.significant]
            if diagnostic == wanted and level:
                text.append(f"- {decoder}, {diagnostic}: {join_names(level)} "
                            f"{'is' if len(level) == 1 else 'are'} not distinguishable from "
                            "the floor.")
        tables.append(Table(f"Decoder {decoder}" + (f": floor {floor.encoder}"
                                                     if floor.encoder else ""),
                            ["diagnostic", "encoder", "value", "value's 95% interval",
                             "floor", "gain", "gain's 95% interval", "p", "p (Holm)",
                             "significant"], rows))
    return Section("Gain over the floor", text, tables=tables)
