"""The report's "Privacy: canaries" section: per entity type, how much of the canaries each
attacker recovers and the exposure it gets (`harness.analyses.privacy.exposure`), every encoder's
points beside the floor's (the random-gaussian control's attacker, undefended)."""

from __future__ import annotations

from collections.abc import Callable

from harness.analyses.privacy.results import EntityRecovery, Privacy, PrivacyPoint
from harness.report.elements import Section, Table, fmt, fmt_interval

Label = Callable[[PrivacyPoint], str]
"""A point's name in the report's tables ("clean", "gaussian 0.5")."""


def _rows(privacy: Privacy, kinds: list[str], label: Label,
          cell: Callable[[EntityRecovery], str]) -> list[list[str]]:
    """The floor's row, then one per encoder and point: `cell` of each entity type."""
    def cells(found: dict[str, EntityRecovery] | None) -> list[str]:
        return [cell(found[k]) if found and k in found else "–" for k in kinds]

    rows = []
    if privacy.floor_canaries is not None:
        rows.append([f"{privacy.floor_encoder} (floor)", label(PrivacyPoint()),
                     *cells(privacy.floor_canaries)])
    for encoder, points in privacy.points.items():
        rows.extend([encoder, label(point), *cells(point.canaries)] for point in points)
    return rows


def _recovery(found: EntityRecovery) -> str:
    return f"{fmt(found.exact)} {fmt_interval(found.exact_ci95)} / {fmt(found.partial)}"


def _exposure(found: EntityRecovery) -> str:
    """The strongest ranker's exposure with its interval, and that ranker."""
    cell = f"{fmt(found.exposure, 2)} {fmt_interval(found.exposure_ci95, 2)}".strip()
    return f"{cell} {found.ranker}" if found.ranker else cell


def canary_section(privacy: Privacy, label: Label) -> Section:
    """The canaries' recovery and exposure per entity type, the floor's first; `label` names
    each point."""
    first: dict[str, EntityRecovery] = {}
    for found in [privacy.floor_canaries or {}, *[p.canaries or {} for rows in
                                                  privacy.points.values() for p in rows]]:
        for kind, recovery in found.items():
            first.setdefault(kind, recovery)
    kinds = list(first)
    floor = (f"the floor's: {privacy.floor_encoder}, whose vectors carry no information, "
             "undefended" if privacy.floor_canaries is not None else "no floor")
    text = [
        f"{privacy.canaries} canary sentences carry first names, places, numbers and dates of "
        "the kind the training text holds (docs/privacy.md); each is encoded, defended and "
        f"decoded by every attacker, and by {floor}. Recovery: per entity type, the "
        "percentage recovered exactly (its tokens contiguous in the output) with its exact 95% "
        "interval, then the percentage recovered partly (half its tokens or more).",
        "Exposure (Carlini et al. 2019, Sec. 4): log2 M - log2 rank of the true value among M "
        "candidates of its type (the true one and M-1 others), each candidate a whole canary "
        "sentence ranked given the canary's stored vector by every ranker: the adaptive "
        "decoder's likelihood (decoder) and each attack that ranks (oracle: the candidates "
        "queried through the store, scored by the noise model's likelihood); in bits, the "
        "strongest ranker's mean over canaries (the ranker named beside it) with its bootstrap "
        "95% interval over canaries. It is log2 M for a true value ranked first and 0 for one "
        "ranked last; a rank uniform on 1..M, what a vector without information gives, has "
        "the mean log2 M - log2(M!)/M (chance). Every ranker's exposure is in results.json "
        "(`canaries.TYPE.rankers`)."]
    recovered = Table("Recovered exactly (%) [95% interval] / partly (%)",
                      ["encoder", "vectors", *[f"{k} (n={first[k].n})" for k in kinds]],
                      _rows(privacy, kinds, label, _recovery))
    exposed = Table("Exposure (bits) [95% interval], strongest ranker", ["encoder", "vectors", *[
        f"{k} (M={fmt(first[k].candidates)}, chance {fmt(first[k].exposure_chance, 2)})"
        for k in kinds]], _rows(privacy, kinds, label, _exposure))
    return Section("Privacy: canaries", text, tables=[recovered, exposed])
