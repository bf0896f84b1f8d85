"""The downstream rank beside the V2S rank (Kerscher & Eger 2020, Table 1)."""

from __future__ import annotations

from harness.analyses.correlation.results import correlations_of, ranked_by
from harness.report.elements import Section, Table, fmt, fmt_p
from harness.results.model import RunResults


def table1_section(results: RunResults) -> Section | None:
    """Downstream rank against V2S rank, sorted by downstream rank, with their agreement."""
    ranks = correlations_of(results).ranks
    if not ranks:
        return None
    wanted = ranked_by(results)
    by = wanted if wanted in ranks else next((k for k in ranks if k != "downstream"), "")
    downstream, v2s = ranks.get("downstream", {}), ranks.get(by, {})
    encoders = sorted(set(downstream) | set(v2s),
                      key=lambda e: (downstream.get(e, 10**6), v2s.get(e, 10**6), e))
    rows = [[e, fmt(downstream.get(e)), fmt(v2s.get(e)),
             fmt(v2s[e] - downstream[e]) if e in v2s and e in downstream else "–"]
            for e in encoders]
    text = ["Rank 1 is best. Downstream rank: encoders ranked within each task, ranks averaged "
            f"over tasks, the averages ranked; V2S rank by {by or 'a diagnostic'} "
            "(Kerscher & Eger 2020, Table 1)."]
    common = [e for e in encoders if e in downstream and e in v2s]
    if len(common) >= 3 and by:
        from harness.stats import correlate

        agreement = correlate({e: -downstream[e] for e in common}, {e: -v2s[e] for e in common})
        if agreement.rho is not None:
            text.append(f"Spearman correlation of the two rankings over {agreement.n} encoders: "
                        f"{agreement.rho:.2f} (p {fmt_p(agreement.p)}).")
    return Section("Ranks", text, tables=[Table("", ["encoder", "downstream rank",
                                                     f"V2S rank ({by})", "V2S - DS"], rows)])
