"""The privacy analysis in the report: the privacy-utility figure (one panel per encoder,
leakage against utility, one line per defence through its levels, the clean vectors and the
floor), the leakage of each defence at matched utility, every point's numbers, the
non-adaptive attacker's where it ran, and the canaries' recovery."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from typing import Any

from harness.analyses.privacy.canary_report import canary_section
from harness.analyses.privacy.results import (
    AttackLeakage,
    MatchedLeakage,
    Privacy,
    PrivacyPoint,
    judged_by,
)
from harness.report.elements import Section, Table, fmt, fmt_interval
from harness.results.model import RunResults
from harness.results.records import MetricScore

FIGURE = "privacy-utility.png"
LEAKED_FIGURE = "privacy-leaked-pairs.png"
CLEAN, FLOOR = "clean", "floor"


def _level(level: Any) -> str:
    return f"{level:g}" if isinstance(level, (int, float)) else str(level)


def _label(point: PrivacyPoint) -> str:
    if not point.defence:
        return CLEAN
    return point.defence + ("" if point.level is None else f" {_level(point.level)}")


def privacy_figures(results: RunResults) -> dict[str, bytes]:
    """The privacy-utility figure, when any point has a utility, and the leakage against the
    number of leaked pairs, when an attack ran with several (`leaked_pairs_figure`)."""
    privacy = results.privacy
    if privacy is None:
        return {}
    return {**_utility_figure(privacy), **leaked_pairs_figure(privacy)}


def leaked_pairs_caption(privacy: Privacy) -> str:
    """What the leaked-pairs figure plots, as its own caption (the report's figure caption is
    the title of the section that shows it, so the figure has a section of its own)."""
    return (f"Privacy: each attack's {privacy.compare_on} against the number of leaked pairs k, "
            "clean vectors")


def leaked_pairs_figure(privacy: Privacy) -> dict[str, bytes]:
    """The leakage against the number of leaked pairs (`leaked_pairs_curves`) as a figure;
    empty when no attack ran with two or more numbers."""
    from harness.report.plots import curves_png

    panels = leaked_pairs_curves(privacy)
    if not panels:
        return {}
    return {LEAKED_FIGURE: curves_png(
        panels, xlabel="leaked (text, vector) pairs k", log_x=True,
        title=f"Each attack's {privacy.compare_on} against the leaked pairs k it is given "
              "(clean vectors)", dashed=frozenset(name for lines in panels.values()
                                                  for name in lines
                                                  if name.endswith(f" ({FLOOR})")))}


def _line(attack: AttackLeakage) -> tuple[str, str]:
    """What makes entries one attack's line: its registered name and its options other than
    the number of leaked pairs it was given (those equal to `leaked`), as recorded."""
    rest = {name: value for name, value in attack.options.items()
            if not (isinstance(value, int) and not isinstance(value, bool)
                    and value == attack.leaked)}
    return attack.attack, json.dumps(rest, sort_keys=True)


def _line_names(keys: list[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """A line's name in the figure: the attack's name, with its other options beside it where
    the attack draws several lines ('align {"draws": 4, "surrogate": "gem"}')."""
    lines = Counter(name for name, _ in keys)
    return {(name, rest): name if lines[name] == 1 else f"{name} {rest}"
            for name, rest in keys}


def leaked_pairs_curves(privacy: Privacy) -> dict[str, dict[str, list[Any]]]:
    """Encoder -> line -> (k, score, low, high) by k, for an attack run with several numbers
    of leaked pairs k (`align` at k = 10, 100, 1,000: ALGEN's few-shot curve): its
    `compare_on` score with its 95% interval on the encoder's clean vectors, and the same
    attack's on the floor encoder's vectors as "<line> (floor)". A line joins the entries of
    one attack whose options differ in the number of leaked pairs alone (`_line`); two
    attacks, or one with other options that differ, are separate lines, and a single point is
    no line."""
    measure = privacy.compare_on
    if measure is None:
        return {}

    def curves(attacks: Mapping[str, AttackLeakage]) -> dict[tuple[str, str], list[Any]]:
        found: dict[tuple[str, str], list[Any]] = {}
        for attack in attacks.values():
            score = attack.leakage.get(measure)
            if attack.leaked and score is not None and score.value is not None:
                low, high = score.ci95 or (None, None)
                found.setdefault(_line(attack), []).append(
                    (float(attack.leaked), score.value, low, high))
        return {key: sorted(line, key=lambda point: point[0]) for key, line in found.items()
                if len({k for k, *_ in line}) > 1}

    floor = curves(privacy.floor_attacks or {})
    panels = {}
    for encoder, rows in privacy.points.items():
        clean = next((p for p in rows if not p.defence), None)
        found = curves(clean.attacks or {}) if clean else {}
        names = _line_names(list(found))
        if found:
            panels[encoder] = {**{names[key]: line for key, line in found.items()},
                               **{f"{names[key]} ({FLOOR})": line for key, line in floor.items()
                                  if key in found}}
    return panels


def _utility_figure(privacy: Privacy) -> dict[str, bytes]:
    """The privacy-utility figure, when any point has a utility."""
    from harness.report.plots import curves_png

    if not any(p.utility is not None for rows in privacy.points.values() for p in rows):
        return {}
    panels: dict[str, dict[str, Any]] = {}
    attacked = privacy.compare_on is not None and any(
        p.strongest for rows in privacy.points.values() for p in rows)
    measure = privacy.compare_on if attacked and privacy.compare_on else privacy.leakage
    floor = privacy.floor.get(measure)
    if attacked and privacy.floor_attacks:  # the strongest attack at the floor, as elsewhere
        floor = max((a.leakage[measure] for a in privacy.floor_attacks.values()
                     if measure in a.leakage and a.leakage[measure].value is not None),
                    key=lambda score: score.value, default=floor)
    for encoder, rows in privacy.points.items():
        lines: dict[str, list[Any]] = {}
        for point in rows:
            score = judged_by(point, privacy.leakage, privacy.compare_on)
            if point.utility is None or score is None:
                continue
            low, high = score.ci95 if score.ci95 else (None, None)
            lines.setdefault(point.defence or CLEAN, []).append(
                (point.utility, score.value, low, high))
        if not lines:  # no task kept for this encoder's utility (`utility_left_out`)
            continue
        if floor is not None and floor.value is not None:
            xs = [x for line in lines.values() for x, *_ in line]
            lines[FLOOR] = [(min(xs), floor.value, None, None), (max(xs), floor.value, None, None)]
        panels[encoder] = {name: sorted(line) for name, line in lines.items()}
    title = (f"{measure} of the strongest attack against utility" if attacked else
             f"{privacy.leakage} of the attacker ({privacy.attacker}, trained on the defended "
             "vectors) against utility")
    return {FIGURE: curves_png(panels, xlabel="utility (share of the clean margin over chance)",
                               title=title, dashed=frozenset({FLOOR}))}


def privacy_sections(results: RunResults, figures: Mapping[str, bytes]) -> list[Section]:
    """The privacy section, and the canaries' when the study had any."""
    privacy = results.privacy
    if privacy is None:
        return []
    text = [f"An attacker who has the stored vectors and the encoder's outputs on text of its "
            f"own trains a decoder ({privacy.attacker}) on (defended vector, sentence) pairs "
            "and reads the test sentences back from their defended vectors (docs/privacy.md). "
            f"Leakage: the attacker's {privacy.leakage} (all diagnostics in the table). "
            f"Utility: {privacy.utility}.",
            f"At matched utility: for each defence, the level that leaks least among those "
            f"keeping {100 * privacy.matched_utility:g}% of the clean utility, judged on the "
            "interval: a level keeps it only when the lower bound of its utility's 95% interval "
            "reaches it; \"–\" where no level keeps it.",
            *_left_out_note(privacy)]
    if privacy.floor_encoder:
        floor = privacy.floor.get(privacy.leakage)
        text.append(f"The floor: {privacy.floor_encoder}, whose vectors carry no information, "
                    f"leaks {fmt(floor.value if floor else None)} {privacy.leakage} undefended.")
    sections = [Section("Privacy: leakage against utility", text,
                        figures=[FIGURE] if FIGURE in figures else [],
                        tables=[*_matched_tables(privacy), _points_table(privacy),
                                *_attacks_table(privacy), *_steps_table(privacy),
                                *_non_adaptive_table(privacy)])]
    if LEAKED_FIGURE in figures:
        sections.append(_leaked_pairs_section(privacy))
    if privacy.canaries:
        sections.append(canary_section(privacy, _label))
    return sections


def _leaked_pairs_section(privacy: Privacy) -> Section:
    """The leaked-pairs figure under its own caption (`leaked_pairs_caption`), with what its
    lines are."""
    return Section(leaked_pairs_caption(privacy), [
        f"Each attack run with several numbers of leaked (text, vector) pairs k: its "
        f"{privacy.compare_on} on each encoder's clean vectors against k (95% intervals over "
        "the test sentences), the same attack on the floor encoder's vectors dashed. A line "
        "joins the entries of one attack whose options differ in k alone; two attacks, or one "
        "attack with other options that differ, are separate lines."],
        figures=[LEAKED_FIGURE])


def _matched_tables(privacy: Privacy) -> list[Table]:
    """The two verdicts at matched utility, each labelled by its attack and measure: word
    leakage (the strongest attack on `compare_on`, or the decoder's `leakage` where no attack
    ran) and, where the spec has one, text recovery (the strongest attack that writes
    sentences on `text_on`, with its exact match)."""
    attacked = any(p.strongest for rows in privacy.points.values() for p in rows)
    words = privacy.compare_on if attacked and privacy.compare_on else privacy.leakage
    tables = [_matched_table(privacy, privacy.matched, words, "Word leakage")]
    if privacy.matched_text and privacy.text_on:
        tables.append(_matched_table(privacy, privacy.matched_text, privacy.text_on,
                                     "Text recovery", exact="id"))
    return tables


def _matched_table(privacy: Privacy, matched: Mapping[str, Mapping[str, MatchedLeakage]],
                   measure: str, verdict: str, exact: str | None = None) -> Table:
    """One verdict: per encoder and defence, the least-leaking level keeping the target
    utility, the attack it is judged by, that attack's `measure` there and on the clean
    vectors (and its `exact` match there, for text recovery)."""
    def cell(score: MetricScore | None) -> str:
        return "–" if score is None else f"{fmt(score.value)} {fmt_interval(score.ci95)}".strip()

    rows = []
    for encoder, by_defence in matched.items():
        for defence, found in by_defence.items():
            level = ("one setting" if found.utility is not None else "–") \
                if found.level is None else _level(found.level)
            row = [encoder, defence, level,
                   f"{fmt(found.utility, 3)} {fmt_interval(found.utility_ci95, 3)}".strip(),
                   found.attack or (f"decoder ({privacy.attacker})" if found.leakage else "–"),
                   cell(found.leakage), cell(found.clean)]
            if exact is not None:
                row.append(cell(_exact(privacy, encoder, defence, found, exact)))
            rows.append(row)
    return Table(f"{verdict} at {100 * privacy.matched_utility:g}% of the clean utility: the "
                 f"strongest attack at the level and its {measure} (95% intervals over the test "
                 "sentences), and the same attack on the clean vectors",
                 ["encoder", "defence", "level", "utility [95% interval]", "strongest attack",
                  f"{measure} of the attack", f"{measure} of the attack, clean vectors",
                  *([f"{exact} of the attack"] if exact is not None else [])], rows)


def _exact(privacy: Privacy, encoder: str, defence: str, found: MatchedLeakage,
           measure: str) -> MetricScore | None:
    """The matched level's attack's score on `measure` at that level."""
    point = next((p for p in privacy.points.get(encoder, [])
                  if p.defence == defence and p.level == found.level), None)
    attack = (point.attacks or {}).get(found.attack or "") if point is not None else None
    return attack.leakage.get(measure) if attack is not None else None


def _left_out_note(privacy: Privacy) -> list[str]:
    """The tasks left out of utility and why, per encoder (`PrivacyPoint.utility_left_out`);
    none when every task counts."""
    notes = []
    for encoder, points in privacy.points.items():
        why: dict[str, str] = {}
        for point in points:
            for task, reason in point.utility_left_out.items():
                why.setdefault(task, reason)
        if why:
            notes.append(f"{encoder}: " + "; ".join(f"{task} ({reason})"
                                                    for task, reason in why.items()))
    if not notes:
        return []
    return ["Left out of utility (docs/privacy.md): " + ". ".join(notes) + "."]


def _non_adaptive_table(privacy: Privacy) -> list[Table]:
    """The clean attacker's diagnostics on the defended test vectors (`privacy.non_adaptive`)
    beside the adaptive attacker's on the leakage measure; none when no point has them."""
    found = [(encoder, point) for encoder, points in privacy.points.items() for point in points
             if point.non_adaptive]
    if not found:
        return []
    metrics = list(dict.fromkeys(m for _, point in found for m in point.non_adaptive or {}))

    def cell(score: Any) -> str:
        return "–" if score is None else f"{fmt(score.value)} {fmt_interval(score.ci95)}".strip()

    rows = [[encoder, _label(point), cell(point.leakage.get(privacy.leakage)),
             *[cell((point.non_adaptive or {}).get(m)) for m in metrics]]
            for encoder, point in found]
    return [Table(f"The non-adaptive attacker: the decoder trained on the clean vectors reads the "
                  f"defended test vectors (95% intervals), beside the adaptive attacker's "
                  f"{privacy.leakage}",
                  ["encoder", "vectors", f"{privacy.leakage} adaptive",
                   *[f"{m} non-adaptive" for m in metrics]], rows)]


def _attacks_table(privacy: Privacy) -> list[Table]:
    """Each attack's leakage at every point on the measure all attacks yield, with its 95%
    interval and n, and the strongest (the highest); none when no point ran attacks."""
    measure = privacy.compare_on
    labels = list(dict.fromkeys(label for points in privacy.points.values() for point in points
                                for label in point.attacks or {}))
    if not labels or measure is None:
        return []
    rows = []
    for encoder, points in privacy.points.items():
        for point in points:
            attacks = point.attacks or {}
            cells = []
            for label in labels:
                score = attacks[label].leakage.get(measure) if label in attacks else None
                cells.append("–" if score is None else
                             f"{fmt(score.value)} {fmt_interval(score.ci95)}".strip())
            best = attacks[point.strongest].leakage[measure] if point.strongest else None
            n = fmt(best.support) if best is not None else "–"
            text = ([point.strongest_text or "–"] if privacy.text_on else [])
            rows.append([encoder, _label(point), *cells, point.strongest or "–", *text, n])
    text_header = ([f"strongest on {privacy.text_on} (writes sentences)"] if privacy.text_on
                   else [])
    return [Table(f"Every attack's {measure} (95% interval over the test sentences; the "
                  "strongest, the highest, is what word leakage is judged by; text recovery "
                  "by the strongest of the attacks that write sentences)",
                  ["encoder", "vectors", *labels, f"strongest on {measure}", *text_header,
                   "n"], rows)]


def _steps_table(privacy: Privacy) -> list[Table]:
    """An iterative attack's score on the compared measure after each step and the gain of
    its last step over step 0, at every point; none when no attack reports steps."""
    found = [(encoder, point, label, attack.steps) for encoder, points in privacy.points.items()
             for point in points for label, attack in (point.attacks or {}).items()
             if attack.steps]
    if not found or privacy.compare_on is None:
        return []
    width = max(len(steps) for *_, steps in found)
    rows = [[encoder, _label(point), label,
             *[f"{fmt(steps[t].value)} {fmt_interval(steps[t].ci95)}".strip()
               if t < len(steps) else "–" for t in range(width)],
             fmt(None if steps[-1].value is None or steps[0].value is None
                 else steps[-1].value - steps[0].value)]
            for encoder, point, label, steps in found]
    return [Table(f"Iterative attacks, {privacy.compare_on} after each step (step 0: the "
                  "decoder's candidates re-ranked; 95% intervals over the test sentences)",
                  ["encoder", "vectors", "attack", *[f"step {t}" for t in range(width)],
                   "gain"], rows)]


def _points_table(privacy: Privacy) -> Table:
    metrics = list(next(iter(privacy.points.values()))[0].leakage) if privacy.points else []
    rows = []
    for encoder, points in privacy.points.items():
        for point in points:
            rows.append([encoder, _label(point), point.describes or "none", fmt(point.dim),
                         f"{fmt(point.utility, 3)} {fmt_interval(point.utility_ci95, 3)}".strip(),
                         *[fmt(point.leakage[m].value) for m in metrics]])
    return Table("Every encoder, defence and level", ["encoder", "vectors", "defence",
                                                      "dim", "utility", *metrics], rows)
