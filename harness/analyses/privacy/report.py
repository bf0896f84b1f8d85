"""The privacy analysis in the report: the privacy-utility figure (one panel per encoder,
leakage against utility, one line per defence through its levels, the clean vectors and the
floor), the leakage of each defence at matched utility, every point's numbers and the canaries'
recovery."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.analyses.privacy.results import Privacy, PrivacyPoint
from harness.report.elements import Section, Table, fmt, fmt_interval
from harness.results.model import RunResults

FIGURE = "privacy-utility.png"
CLEAN, FLOOR = "clean", "floor"


def _level(level: Any) -> str:
    return f"{level:g}" if isinstance(level, (int, float)) else str(level)


def _label(point: PrivacyPoint) -> str:
    if not point.defence:
        return CLEAN
    return point.defence + ("" if point.level is None else f" {_level(point.level)}")


def privacy_figures(results: RunResults) -> dict[str, bytes]:
    """The privacy-utility figure, when any point has a utility."""
    from harness.report.plots import curves_png

    privacy = results.privacy
    if privacy is None or not any(p.utility is not None for rows in privacy.points.values()
                                  for p in rows):
        return {}
    panels: dict[str, dict[str, Any]] = {}
    floor = privacy.floor.get(privacy.leakage)
    for encoder, rows in privacy.points.items():
        lines: dict[str, list[Any]] = {}
        for point in rows:
            score = point.leakage[privacy.leakage]
            if point.utility is None:
                continue
            low, high = score.ci95 if score.ci95 else (None, None)
            lines.setdefault(point.defence or CLEAN, []).append(
                (point.utility, score.value, low, high))
        if floor is not None and floor.value is not None:
            xs = [x for line in lines.values() for x, *_ in line]
            lines[FLOOR] = [(min(xs), floor.value, None, None), (max(xs), floor.value, None, None)]
        panels[encoder] = {name: sorted(line) for name, line in lines.items()}
    title = (f"{privacy.leakage} of the attacker ({privacy.attacker}, trained on the defended "
             "vectors) against utility")
    return {FIGURE: curves_png(panels, xlabel="utility (relative to the clean vectors)",
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
            f"keeping {100 * privacy.matched_utility:g}% of the clean utility; \"–\" where no "
            "level keeps it."]
    if privacy.floor_encoder:
        floor = privacy.floor.get(privacy.leakage)
        text.append(f"The floor: {privacy.floor_encoder}, whose vectors carry no information, "
                    f"leaks {fmt(floor.value if floor else None)} {privacy.leakage} undefended.")
    sections = [Section("Privacy: leakage against utility", text,
                        figures=[FIGURE] if FIGURE in figures else [],
                        tables=[_matched_table(privacy), _points_table(privacy)])]
    if privacy.canaries:
        sections.append(_canary_section(privacy))
    return sections


def _matched_table(privacy: Privacy) -> Table:
    rows = []
    for encoder, by_defence in privacy.matched.items():
        clean = privacy.points[encoder][0].leakage[privacy.leakage]
        for defence, matched in by_defence.items():
            score = matched.leakage
            level = ("one setting" if matched.utility is not None else "–") \
                if matched.level is None else _level(matched.level)
            rows.append([encoder, defence, level, fmt(matched.utility, 3),
                         f"{fmt(score.value)} {fmt_interval(score.ci95)}".strip() if score
                         else "–", fmt(clean.value)])
    return Table(f"Leakage at {100 * privacy.matched_utility:g}% of the clean utility",
                 ["encoder", "defence", "level", "utility", privacy.leakage,
                  f"{privacy.leakage} clean"], rows)


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


def _canary_section(privacy: Privacy) -> Section:
    counts = {k: r.n for rows in privacy.points.values() for p in rows
              for k, r in (p.canaries or {}).items()}
    kinds = list(counts)
    rows = []
    for encoder, points in privacy.points.items():
        for point in points:
            found = point.canaries or {}
            rows.append([encoder, _label(point), *[
                f"{fmt(found[k].exact)} {fmt_interval(found[k].exact_ci95)} / "
                f"{fmt(found[k].partial)}" if k in found else "–" for k in kinds]])
    return Section("Privacy: canaries", [
        f"{privacy.canaries} canary sentences carry made-up names, numbers, dates and e-mail "
        "addresses; each is encoded, defended and decoded by the attacker. Per entity type: the "
        "percentage recovered exactly (its tokens contiguous in the output) with its exact "
        "95% interval, then the percentage recovered partly (half its tokens or more)."],
        tables=[Table("", ["encoder", "vectors", *[f"{k} (n={counts[k]})" for k in kinds]],
                      rows)])
