"""The diagnostics table (Kerscher & Eger 2020, Table 4): each pair's corpus scores with their
intervals and how they were got, the support beside every rate, the spread over seeds, and
flags on low support, on decoders still improving when training stopped and on decoders whose
outputs are often empty."""

from __future__ import annotations

from harness.report.elements import (
    EMPTY_WARNING,
    FLAG,
    Section,
    Table,
    digits_for,
    empty_cell,
    empty_outputs,
    fmt,
    higher_is_better,
    join_names,
    low_support,
    metric_order,
    min_support,
    mostly_empty,
    pair_name,
    still_improving,
)
from harness.results.model import MetricScore, PairResult, RunResults
from harness.stats.intervals import MIN_SEEDS

INTERVALS = {
    "clopper-pearson": "the exact Clopper-Pearson interval over the n test sentences (with "
                       "several seeds: every seed agreed on every sentence)",
    "korn-graubard": "the exact Clopper-Pearson bounds at the summed success fractions over "
                     "seeds, n sentences (Korn & Graubard 1998, design effect truncated at 1)",
    "bootstrap": "a percentile bootstrap over test sentences",
    "cluster-bootstrap": "a percentile bootstrap over test sentences, each with all its seeds",
    # results.json of older harnesses, which pooled seeds as independent trials
    "bootstrap-seeds": "a percentile bootstrap over test sentences and seeds drawn one per "
                       "resample (older harness)",
    "clopper-pearson+bootstrap-seeds": "the hull of an exact interval of counts pooled over "
                                       "seeds and a bootstrap over sentences and seeds (older "
                                       "harness: support over-counted)",
}
"""How an interval was got (`MetricScore.interval`), in words; a "+seeds-t" suffix adds the
seed component (`SEEDS_T`)."""

SEEDS_T = ("plus a seed component (Student t over the seeds' values, combined by MOVER): "
           "seed variance included")


def interval_words(method: str | None) -> str:
    """How an interval was got, in words (`INTERVALS`, with the seed component)."""
    base = (method or "").removesuffix("+seeds-t")
    how = INTERVALS.get(base, base or UNRECORDED)
    return f"{how}, {SEEDS_T}" if method and method.endswith("+seeds-t") else how

UNRECORDED = ("method not recorded (results.json of an older harness, which used a percentile "
              "bootstrap over test sentences)")


def score_cell(score: MetricScore | None, threshold: int) -> str:
    """A corpus score as the table shows it: value (± std over seeds), interval, support, the
    chance level where the metric has one, and the flag when its support is under
    `threshold`."""
    if score is None:
        return "–"
    digits = digits_for(score.higher_is_better)
    text = fmt(score.value, digits)
    spread = score.seeds
    if spread is not None and spread.n > 1 and spread.std is not None:
        text += f" ± {fmt(spread.std, digits)}"
    if score.value is not None:
        low, high = score.ci95
        text += f" [{fmt(low, digits)}, {fmt(high, digits)}]"
    if score.support is not None:
        text += f" n={score.support}"
    if score.chance is not None:
        text += f" (chance {fmt(score.chance, digits)})"
    if low_support(score, threshold):
        text += f" {FLAG}"
    return text


def training_cell(run: PairResult) -> str:
    """How training ended: still improving (flagged), stopped early, or its best epoch."""
    improving, trained = still_improving(run)
    train = run.train
    if improving:
        if trained > 1:
            return f"{FLAG} still improving ({improving} of {trained} seeds)"
        return f"{FLAG} still improving (best epoch {train.best_epoch} of {train.epochs})"
    if train.stopped_early:
        return f"stopped early (best epoch {fmt(train.best_epoch)})"
    if train.best_epoch is not None:
        return f"best epoch {train.best_epoch} of {fmt(train.epochs)}"
    return "–"


def _methods(runs: list[PairResult], metrics: list[str]) -> list[str]:
    """One line per decoder and way of getting intervals, naming the metrics got that way."""
    groups: dict[tuple[str, str], list[str]] = {}
    for run in runs:
        for metric in metrics:
            if metric in run.metrics:
                method = run.metrics[metric].interval
                how = interval_words(method)
                names = groups.setdefault((run.decoder, how), [])
                if metric not in names:
                    names.append(metric)
    return [f"- {decoder}: {', '.join(names)} by {how}." if how != UNRECORDED
            else f"- {decoder}: {', '.join(names)}: {how}."
            for (decoder, how), names in groups.items()]


def _seed_note(runs: list[PairResult]) -> str:
    """What the values and intervals of pairs trained with several seeds are."""
    without = sorted({pair_name(run) for run in runs if run.seeds and not any(
        score.seed_variance for score in run.metrics.values())})
    text = ("With several seeds the test sentence stays the unit: a rate is the mean over "
            "sentences of each sentence's success fraction over the seeds (support: the "
            "sentences), any other value the mean over the seeds; ± is the seeds' standard "
            "deviation (training variance).")
    if without:
        text += (f" Seed variance is not included in the intervals of {join_names(without)}: "
                 f"it is estimated only from {MIN_SEEDS} or more seeds, so those intervals "
                 "hold for the decoders trained; the ± beside them shows the seeds' spread.")
    return text


def _undefined(runs: list[PairResult]) -> list[str]:
    return [f"- {name} of {pair_name(run)} is undefined in {score.undefined_resamples} "
            "bootstrap resamples, which its interval leaves out."
            for run in runs for name, score in run.metrics.items()
            if score.undefined_resamples]


def diagnostics_section(results: RunResults) -> Section | None:
    """The diagnostics of the run's pairs, or the published values of a table spec."""
    runs = results.runs
    if not runs:
        return _published_diagnostics(results)
    metrics = metric_order(runs)
    threshold = min_support(results)
    seeded = any(run.seeds for run in runs)
    trained = any(run.train.best_epoch is not None or run.seeds for run in runs)
    counted = any(empty_outputs(run) for run in runs)
    header = ["encoder", "decoder", *(["seeds"] if seeded else []), *metrics,
              *(["empty outputs"] if counted else []), *(["training"] if trained else [])]
    rows = [[run.encoder, run.decoder, *([str(len(run.seeds)) if run.seeds else "1"] if seeded else []),
             *[score_cell(run.metrics.get(m), threshold) for m in metrics],
             *([empty_cell(run)] if counted else []),
             *([training_cell(run)] if trained else [])] for run in runs]
    direction = higher_is_better(results)
    higher = [m for m in metrics if direction[m]]
    lower = [m for m in metrics if not direction[m]]
    text = ["Corpus scores with 95% intervals"
            + (f"; higher is better for {', '.join(higher)}" if higher else "")
            + (f"; lower is better for {', '.join(lower)}" if lower else "")
            + ". – marks an undefined score (a ratio with nothing to count, such as id-perm when "
            "no output is a permutation). n is the support: the test sentences scored, or for "
            "id-perm the sentences where some seed found a permutation. Intervals:"]
    text += _methods(runs, metrics)
    if seeded:
        text.append(_seed_note(runs))
    low = [f"{name} of {pair_name(run)} (n={run.metrics[name].support})"
           for run in runs for name in metrics if low_support(run.metrics.get(name), threshold)]
    if low:
        text.append(f"{FLAG} support under {threshold} (comparison.min_support): "
                    f"{', '.join(low)}. Such a rate moves by whole percentage points with each "
                    "trial: read it, and any rank built on it, with care.")
    improving = [pair_name(run) for run in runs if still_improving(run)[0]]
    if improving:
        text.append(f"{FLAG} still improving: the validation loss of {join_names(improving)} "
                    "was lowest in the last epoch trained, so training stopped before it "
                    "converged and the scores may be too low.")
    empty = mostly_empty(runs)
    if empty:
        text.append(f"{FLAG} empty outputs: more than {EMPTY_WARNING:.0%} of the outputs of "
                    f"{join_names(empty)} are empty. Such a decoder has not learned to "
                    "generate; its scores describe the decoder more than the encoder. Train "
                    "it longer, on more sentences, or larger.")
    text += _undefined(runs)
    return Section("V2S diagnostics", text, tables=[Table("", header, rows)])


def _published_diagnostics(results: RunResults) -> Section | None:
    values = results.published_diagnostics()
    if not values:
        return None
    encoders = list(dict.fromkeys(e for column in values.values() for e in column))
    rows = [[e, *[fmt(values[d].get(e), 2) for d in values]] for e in encoders]
    source = results.published_source()
    return Section("V2S diagnostics",
                   [f"As published{f' ({source})' if source else ''}; no intervals."],
                   tables=[Table("", ["encoder", *values], rows)])
