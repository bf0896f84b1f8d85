"""The report's probes section (the spec's `probes:`): analogy accuracy per encoder and relation
type with examples (Kerscher & Eger 2020, Table 2, right), interpolation summaries, and noise
robustness as a table and a figure (one line per encoder)."""

from __future__ import annotations

from typing import Any

from harness.analyses.probes.results import AnalogyGroup, AnalogySetResult, PairProbes, ProbeRate
from harness.report.elements import Section, Table, fmt, fmt_interval, split_silent
from harness.results.model import RunResults
from harness.text.outputs import shown

NOISE_FILE = "noise-robustness.png"


def _rate(rate: ProbeRate | None) -> str:
    """"12.3 [8.9, 16.5]"; "–" when undefined."""
    if rate is None or rate.value is None:
        return "–"
    return f"{fmt(rate.value)} {fmt_interval(rate.ci95)}"


def _primary(results: RunResults, probes: list[PairProbes]) -> str:
    """The decoder whose probes the figure shows: the correlations' decoder when probed."""
    decoders = list(dict.fromkeys(p.decoder for p in probes))
    primary = results.primary_decoder()
    return primary if primary in decoders else decoders[0]


def _noise_panels(probed: list[PairProbes]) -> dict[str, dict[str, Any]]:
    """The noise figure's panels: Id (with its exact intervals) and BLEU over the scales."""
    return {
        "Id (%)": {p.encoder: [(pt.scale, pt.id.value, *pt.id.ci95) for pt in p.noise.points]
                   for p in probed if p.noise is not None},
        "BLEU": {p.encoder: [(pt.scale, pt.bleu, None, None) for pt in p.noise.points]
                 for p in probed if p.noise is not None}}


def probe_figures(results: RunResults) -> dict[str, bytes]:
    """The noise-robustness figure, when some pair was probed with noise: Id (with its exact
    intervals) and BLEU against the noise scale, one line per encoder (the primary decoder)."""
    probes = [p for p in results.probes or [] if p.noise is not None]
    if not probes:
        return {}
    from harness.report.plots import curves_png

    decoder = _primary(results, probes)
    probed = [p for p in probes if p.decoder == decoder and p.noise is not None]
    panels, _ = split_silent(_noise_panels(probed), value=1)
    if not panels:
        return {}
    return {NOISE_FILE: curves_png(
        panels, xlabel="noise scale (x per-dimension std of the test vectors)",
        title=f"Noise robustness (decoder {decoder}): what each encoder's vectors still give "
              "back under Gaussian noise")}


def probes_section(results: RunResults, figures: dict[str, bytes]) -> Section | None:
    """Analogies, interpolation and noise robustness of every probed pair."""
    probes = results.probes or []
    if not probes:
        return None
    text = ["What the decoders make of vectors they were not trained on (the spec's "
            "`probes:`; docs/probes.md), for the decoder trained with the spec's seed. Rates "
            "are percentages with exact 95% intervals (Clopper-Pearson)."]
    tables = _analogy_tables(probes) + _interpolation_tables(probes) + _noise_tables(probes)
    if any(p.analogies for p in probes):
        text.append("- Analogies (Kerscher & Eger 2020, section 4 and Table 2, right): each "
                    "row a : b :: z : c is solved by decoding vec(a) - vec(b) + vec(c) (classic "
                    "form: a : b :: c : d from vec(b) - vec(a) + vec(c)). Accuracy: outputs "
                    "equal to the expected answer, per relation type; BLEU: mean sentence BLEU "
                    "against it; new: outputs differing from a, b and c.")
    if any(p.interpolation for p in probes):
        text.append("- Interpolation (section 1): z(alpha) = alpha x + (1 - alpha) y decoded "
                    "from alpha = 1 (x) to 0 (y); distinct sentences per path, both ends "
                    "reproduced, and the first alpha whose output differs from x's.")
    if any(p.noise for p in probes):
        text.append("- Noise: Gaussian noise of s times each dimension's standard deviation "
                    "added to the test vectors (one seeded draw), Id and BLEU at each s; "
                    "scale 0 is the vectors as they are. A figure panel that is 0 at every "
                    "scale for every encoder is left out (the table has it).")
    return Section("Probes: analogies, interpolation, noise", text,
                   figures=[NOISE_FILE] if NOISE_FILE in figures else [], tables=tables)


def _analogy_tables(probes: list[PairProbes]) -> list[Table]:
    tables = []
    names = list(dict.fromkeys(s.name for p in probes for s in p.analogies))
    for name in names:
        solved = [(p, s) for p in probes for s in p.analogies if s.name == name]
        first = solved[0][1]
        relations = list(first.relations)
        with_expected = first.overall.expected > 0
        header = ["encoder", "decoder", f"all (n={first.overall.expected or first.overall.items})"]
        header += [f"{r} (n={first.relations[r].expected or first.relations[r].items})"
                   for r in relations]
        header += ["BLEU", "new"] if with_expected else []
        rows = []
        for pair, result in solved:
            row = [pair.encoder, pair.decoder, _cell(result.overall, with_expected)]
            row += [_cell(result.relations.get(r), with_expected) for r in relations]
            if with_expected:
                row += [fmt(result.overall.bleu), _rate(result.overall.novel)]
            rows.append(row)
        measure = "accuracy" if with_expected else "outputs differing from a, b and c"
        tables.append(Table(f"Analogies: {name} ({first.form} form), {measure} per relation "
                            "type", header, rows))
    return tables


def _cell(group: AnalogyGroup | None, with_expected: bool) -> str:
    """Accuracy where the set gives expected answers, else the rate of new sentences."""
    if group is None:
        return "–"
    return _rate(group.accuracy if with_expected else group.novel)


def probe_examples_section(results: RunResults) -> Section | None:
    """What the probes decoded: one analogy per relation type with every pair's answer
    (Table 2, right) and the first interpolation path of every pair."""
    probes = results.probes or []
    names = list(dict.fromkeys(s.name for p in probes for s in p.analogies))
    tables = [table for name in names for table in _analogy_examples(
        [(p, s) for p in probes for s in p.analogies if s.name == name])]
    tables += _path_example(probes)
    if not tables:
        return None
    return Section("Probe examples", ["The first analogy of each relation type and what each "
                                      "pair decoded for it (Kerscher & Eger 2020, Table 2, "
                                      "right), and the first interpolation path."],
                   tables=tables, kind="samples")


def _analogy_examples(solved: list[tuple[PairProbes, AnalogySetResult]]) -> list[Table]:
    """One example per relation type: the query and every pair's answer (Table 2, right)."""
    tables = []
    first = solved[0][1]
    for index, example in enumerate(first.examples):
        query = (f"{example.a} : {example.b} :: z : {example.c}" if first.form == "paper"
                 else f"{example.a} : {example.b} :: {example.c} : d")
        rows = [["expected", "", example.expected]] if example.expected else []
        for pair, result in solved:
            if index < len(result.examples):
                rows.append([pair.encoder, pair.decoder, shown(result.examples[index].output)])
        label = f" [{example.relation}]" if example.relation else ""
        tables.append(Table(f"{query}{label}", ["encoder", "decoder", "sentence"], rows))
    return tables


def _interpolation_tables(probes: list[PairProbes]) -> list[Table]:
    probed = [p for p in probes if p.interpolation is not None]
    if not probed:
        return []
    rows = []
    for pair in probed:
        summary = pair.interpolation
        assert summary is not None
        rows.append([pair.encoder, pair.decoder, str(len(summary.paths)), str(summary.steps),
                     fmt(summary.mean_distinct), _rate(summary.ends_reproduced),
                     f"{summary.changed}/{len(summary.paths)}", fmt(summary.mean_first_change, 2)])
    header = ["encoder", "decoder", "paths", "steps", "distinct sentences (mean)",
              "ends reproduced (%)", "paths that change", "first change at alpha (mean)"]
    return [Table("Interpolation paths", header, rows)]


def _path_example(probes: list[PairProbes]) -> list[Table]:
    probed = [p.interpolation for p in probes if p.interpolation and p.interpolation.paths]
    if not probed:
        return []
    path = probed[0].paths[0]
    rows = [[pair.encoder, pair.decoder, f"{alpha:.2f}", shown(output)]
            for pair in probes if pair.interpolation and pair.interpolation.paths
            for alpha, output in zip(pair.interpolation.paths[0].alphas,
                                     pair.interpolation.paths[0].outputs)]
    return [Table(f"Path 1: {path.x} (alpha 1) -> {path.y} (alpha 0)",
                  ["encoder", "decoder", "alpha", "sentence"], rows)]


def _noise_tables(probes: list[PairProbes]) -> list[Table]:
    probed = [p for p in probes if p.noise is not None]
    if not probed:
        return []
    scales = list(dict.fromkeys(pt.scale for p in probed for pt in p.noise.points))  # type: ignore[union-attr]
    header = ["encoder", "decoder"] + [f"s={s:g}: Id / BLEU" for s in scales]
    rows = []
    for pair in probed:
        points = {pt.scale: pt for pt in pair.noise.points}  # type: ignore[union-attr]
        rows.append([pair.encoder, pair.decoder] + [
            f"{_rate(points[s].id)} / {fmt(points[s].bleu)}" if s in points else "–"
            for s in scales])
    sentences = probed[0].noise.sentences  # type: ignore[union-attr]
    return [Table(f"Noise robustness ({sentences} test sentences)", header, rows)]
