"""Stability of the V2S diagnostics between two result sets (Kerscher & Eger 2020, Table 3).

Section 3.3 of the paper asks whether a diagnostic ranks the encoders the same way when the
decoder changes (MoS vs a simple LSTM) or is trained on less data (200k vs 1.4m sentences): for
each diagnostic, the Spearman correlation across encoders between the two settings. Here the
two settings are two runs' results.json (or two decoders of one run).
"""

from __future__ import annotations

from typing import Any

from harness.errors import DataError


def primary_decoder(results: dict[str, Any]) -> str | None:
    """Return the decoder a run correlated (its first), or None for a run without decoders."""
    decoder = (results.get("correlations") or {}).get("decoder")
    decoders = [run["decoder"] for run in results.get("runs", [])]
    if decoder in decoders:
        return decoder
    return decoders[0] if decoders else None


def diagnostic_values(results: dict[str, Any], decoder: str | None = None) -> dict[str, dict[str, float]]:
    """Return metric -> encoder -> corpus value of one decoder's runs (default: the primary).

    A run built from published tables (no runs) gives the values it correlated. Undefined
    values (null) are left out.
    """
    runs = results.get("runs", [])
    if not runs:
        return dict(results.get("diagnostics")
                    or (results.get("correlations") or {}).get("diagnostics") or {})
    decoder = decoder or primary_decoder(results)
    chosen = [run for run in runs if run["decoder"] == decoder]
    if not chosen:
        known = sorted({run["decoder"] for run in runs})
        raise DataError(f"no runs with decoder {decoder!r}; the results have {', '.join(known)}")
    values: dict[str, dict[str, float]] = {}
    for run in chosen:
        for metric, entry in run["metrics"].items():
            if entry.get("value") is not None:  # null: undefined (Id/PERM without a permutation)
                values.setdefault(metric, {})[run["encoder"]] = float(entry["value"])
    return values


def _label(results: dict[str, Any], decoder: str | None) -> dict[str, Any]:
    spec = results.get("spec") or {}
    corpus = (results.get("provenance") or {}).get("corpus") or {}
    label = {"name": spec.get("name", ""), "decoder": decoder,
             "train_sentences": corpus.get("train"), "seed": spec.get("seed")}
    if not results.get("runs") and results.get("diagnostics_source"):
        label["published"] = results["diagnostics_source"]
    return label


def compare_runs(results_a: dict[str, Any], results_b: dict[str, Any], method: str = "spearman",
                 *, decoder_a: str | None = None, decoder_b: str | None = None) -> dict[str, Any]:
    """Return, per diagnostic, the rank correlation across the encoders common to both runs.

    Paper Table 3: rho of each diagnostic between two settings, over the encoders both have
    (pairwise deletion; `n` and `encoders` say which). p-values are exact permutation p-values
    up to 10 encoders (`harness.stats.correlate`). Diagnostics only one run has are listed in
    `only_a` / `only_b`.
    """
    from harness.stats import correlate

    decoder_a = decoder_a or primary_decoder(results_a)
    decoder_b = decoder_b or primary_decoder(results_b)
    values_a = diagnostic_values(results_a, decoder_a)
    values_b = diagnostic_values(results_b, decoder_b)
    diagnostics: dict[str, dict[str, Any]] = {}
    notes: list[str] = []
    for metric in [m for m in values_a if m in values_b]:
        a, b = values_a[metric], values_b[metric]
        common = sorted(encoder for encoder in a if encoder in b)
        result = correlate(a, b, method)
        diagnostics[metric] = {**result.to_json(), "encoders": common}
        if result.rho is None:
            notes.append(f"{metric}: undefined over {result.n} common encoders (needs 3 or more, "
                         "and values that are not all equal)")
    return {"method": method, "a": _label(results_a, decoder_a), "b": _label(results_b, decoder_b),
            "diagnostics": diagnostics,
            "only_a": [m for m in values_a if m not in values_b],
            "only_b": [m for m in values_b if m not in values_a], "notes": notes}


def _number(value: float | None, digits: int) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def render_comparison(comparison: dict[str, Any]) -> str:
    """Return the comparison as a plain-text table, one diagnostic per line (paper Table 3)."""
    def describe(label: dict[str, Any]) -> str:
        parts = [label.get("name") or "(unnamed)"]
        if label.get("published"):
            parts.append(f"published: {label['published']}")
        if label.get("decoder"):
            parts.append(f"decoder {label['decoder']}")
        if label.get("train_sentences"):
            parts.append(f"{label['train_sentences']} training sentences")
        if label.get("seed") is not None:
            parts.append(f"seed {label['seed']}")
        return ", ".join(parts)

    lines = [f"Stability of the V2S diagnostics: {comparison['method']} correlation across "
             "encoders (Kerscher & Eger 2020, Table 3)",
             f"  A: {describe(comparison['a'])}", f"  B: {describe(comparison['b'])}", ""]
    rows = [("diagnostic", "rho", "p", "n", "encoders")]
    for metric, entry in comparison["diagnostics"].items():
        p = _number(entry["p"], 3) + (" (exact)" if entry.get("p_method") == "exact" else "")
        rows.append((metric, _number(entry["rho"], 2), p, str(entry["n"]),
                     ", ".join(entry["encoders"])))
    if len(rows) == 1:
        lines.append("  no diagnostic in common")
    else:
        widths = [max(len(row[i]) for row in rows) for i in range(4)]
        for row in rows:
            cells = [row[0].ljust(widths[0])] + [row[i].rjust(widths[i]) for i in (1, 2, 3)]
            lines.append("  " + "  ".join([*cells, row[4]]).rstrip())
    for key, who in (("only_a", "A"), ("only_b", "B")):
        if comparison.get(key):
            lines.append(f"  only in {who}: {', '.join(comparison[key])}")
    lines += [f"  note: {note}" for note in comparison.get("notes", [])]
    return "\n".join(lines) + "\n"
