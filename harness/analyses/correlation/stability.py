"""Stability of the V2S diagnostics between two result sets (Kerscher & Eger 2020, Table 3).

Section 3.3 of the paper asks whether a diagnostic ranks the encoders the same way when the
decoder changes (MoS vs a simple LSTM) or is trained on less data (200k vs 1.4m sentences): for
each diagnostic, the Spearman correlation across encoders between the two settings. Here the
two settings are two runs' results.json (or two decoders of one run).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from harness.errors import DataError
from harness.results.model import RunResults, is_none


class RunLabel(BaseModel):
    """Which result set a side of the comparison is: spec name, decoder, training size, seed."""

    model_config = ConfigDict(frozen=True)

    name: str
    decoder: str | None
    train_sentences: int | None
    seed: int | None
    published: str | None = Field(None, exclude_if=is_none)
    run_dir: str | None = Field(None, exclude_if=is_none)

    def describe(self) -> str:
        """One line naming the result set: its run directory, then what it is."""
        parts = [self.name or "(unnamed)"]
        if self.published:
            parts.append(f"published: {self.published}")
        if self.decoder:
            parts.append(f"decoder {self.decoder}")
        if self.train_sentences:
            parts.append(f"{self.train_sentences} training sentences")
        if self.seed is not None:
            parts.append(f"seed {self.seed}")
        what = ", ".join(parts)
        return f"{self.run_dir} ({what})" if self.run_dir else what


class Difference(BaseModel):
    """A setting whose value differs between the two result sets (None: not set there)."""

    model_config = ConfigDict(frozen=True)

    setting: str
    a: Any
    b: Any


class Stability(BaseModel):
    """One diagnostic's rank correlation between the two result sets, over `encoders`."""

    model_config = ConfigDict(frozen=True)

    rho: float | None
    p: float | None
    p_method: str | None = Field(None, exclude_if=is_none)
    n: int
    encoders: list[str]


class Comparison(BaseModel):
    """Paper Table 3 for two result sets: each common diagnostic's stability, and the
    diagnostics only one of them has."""

    model_config = ConfigDict(frozen=True)

    method: str
    a: RunLabel
    b: RunLabel
    diagnostics: dict[str, Stability]
    only_a: list[str]
    only_b: list[str]
    notes: list[str]
    differences: list[Difference] = []


PROVENANCE_COMPARED = ("harness_version", "git_commit", "device", "device_name", "threads",
                       "corpus", "vocab", "packages")
"""What of each run's provenance the comparison sets side by side (not timings or the cache:
they differ between any two runs)."""


def flattened(value: Any, prefix: str = "") -> dict[str, Any]:
    """Dotted path -> scalar for a nested mapping or list (`decoders.0.hidden`: 128)."""
    if isinstance(value, dict):
        items: Any = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return {prefix: value}
    flat: dict[str, Any] = {}
    for key, item in items:
        flat.update(flattened(item, f"{prefix}.{key}" if prefix else str(key)))
    return flat


def differences(results_a: RunResults, results_b: RunResults) -> list[Difference]:
    """Each spec setting and compared provenance field whose value differs, in spec order."""
    def settings(results: RunResults) -> dict[str, Any]:
        provenance = results.provenance.model_dump(mode="json", include=set(PROVENANCE_COMPARED))
        spec = results.spec.model_dump(mode="json")
        return {**flattened(spec, "spec"), **flattened(provenance, "provenance")}

    a, b = settings(results_a), settings(results_b)
    keys = sorted(dict.fromkeys([*a, *b]), key=lambda key: not key.startswith("spec."))
    return [Difference(setting=key, a=a.get(key), b=b.get(key))
            for key in keys if a.get(key) != b.get(key)]

def diagnostic_values(results: RunResults, decoder: str | None = None
                      ) -> dict[str, dict[str, float]]:
    """Return metric -> encoder -> corpus value of one decoder's runs (default: the primary).

    A run built from published tables (no runs) gives the values it correlated. Undefined
    values (null) are left out.
    """
    if not results.runs:
        return {metric: {encoder: value for encoder, value in column.items()
                         if value is not None}
                for metric, column in results.published_diagnostics().items()}
    decoder = decoder or results.primary_decoder()
    chosen = [run for run in results.runs if run.decoder == decoder]
    if not chosen:
        raise DataError(f"no runs with decoder {decoder!r}; the results have "
                        f"{', '.join(sorted(results.decoders()))}")
    values: dict[str, dict[str, float]] = {}
    for run in chosen:
        for metric, score in run.metrics.items():
            if score.value is not None:  # None: undefined (Id/PERM without a permutation)
                values.setdefault(metric, {})[run.encoder] = score.value
    return values


def _label(results: RunResults, decoder: str | None, run_dir: str | None) -> RunLabel:
    corpus = results.provenance.corpus
    published = results.published_source() if not results.runs else ""
    return RunLabel(name=results.name, decoder=decoder,
                    train_sentences=corpus.train if corpus else None, seed=results.seed,
                    published=published or None, run_dir=run_dir)


def compare_runs(results_a: RunResults, results_b: RunResults, method: str = "spearman",
                 *, decoder_a: str | None = None, decoder_b: str | None = None,
                 run_dirs: tuple[str, str] | None = None) -> Comparison:
    """Return, per diagnostic, the rank correlation across the encoders common to both runs.

    Paper Table 3: rho of each diagnostic between two settings, over the encoders both have
    (pairwise deletion; `n` and `encoders` say which). p-values are exact permutation p-values
    up to 10 encoders (`harness.stats.correlate`). Diagnostics only one run has are listed in
    `only_a` / `only_b`. `differences` lists what differs between the two specs and their
    provenance; `run_dirs` names where each result set was read from.
    """
    from harness.stats import correlate

    decoder_a = decoder_a or results_a.primary_decoder()
    decoder_b = decoder_b or results_b.primary_decoder()
    values_a = diagnostic_values(results_a, decoder_a)
    values_b = diagnostic_values(results_b, decoder_b)
    diagnostics: dict[str, Stability] = {}
    notes: list[str] = []
    for metric in [m for m in values_a if m in values_b]:
        a, b = values_a[metric], values_b[metric]
        common = sorted(encoder for encoder in a if encoder in b)
        result = correlate(a, b, method)
        diagnostics[metric] = Stability(rho=result.rho, p=result.p, p_method=result.p_method,
                                        n=result.n, encoders=common)
        if result.rho is None:
            notes.append(f"{metric}: undefined over {result.n} common encoders (needs 3 or more, "
                         "and values that are not all equal)")
    dir_a, dir_b = run_dirs or (None, None)
    return Comparison(method=method, a=_label(results_a, decoder_a, dir_a),
                      b=_label(results_b, decoder_b, dir_b), diagnostics=diagnostics,
                      only_a=[m for m in values_a if m not in values_b],
                      only_b=[m for m in values_b if m not in values_a], notes=notes,
                      differences=differences(results_a, results_b))


def _number(value: float | None, digits: int) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _shown(value: Any) -> str:
    return "(not set)" if value is None else str(value)


def _differences(found: list[Difference]) -> list[str]:
    if not found:
        return ["  The two specs and their provenance are the same."]
    width = max(len(d.setting) for d in found)
    return ["  What differs (A | B):",
            *[f"    {d.setting:<{width}}  {_shown(d.a)} | {_shown(d.b)}" for d in found]]


def render_comparison(comparison: Comparison) -> str:
    """Return the comparison as a plain-text table, one diagnostic per line (paper Table 3)."""
    lines = [f"Stability of the V2S diagnostics: {comparison.method} correlation across "
             "encoders (Kerscher & Eger 2020, Table 3)",
             f"  A: {comparison.a.describe()}", f"  B: {comparison.b.describe()}"]
    lines += _differences(comparison.differences) + [""]
    rows = [("diagnostic", "rho", "p", "n", "encoders")]
    for metric, entry in comparison.diagnostics.items():
        p = _number(entry.p, 3) + (" (exact)" if entry.p_method == "exact" else "")
        rows.append((metric, _number(entry.rho, 2), p, str(entry.n), ", ".join(entry.encoders)))
    if len(rows) == 1:
        lines.append("  no diagnostic in common")
    else:
        widths = [max(len(row[i]) for row in rows) for i in range(4)]
        for row in rows:
            cells = [row[0].ljust(widths[0])] + [row[i].rjust(widths[i]) for i in (1, 2, 3)]
            lines.append("  " + "  ".join([*cells, row[4]]).rstrip())
    for names, who in ((comparison.only_a, "A"), (comparison.only_b, "B")):
        if names:
            lines.append(f"  only in {who}: {', '.join(names)}")
    lines += [f"  note: {note}" for note in comparison.notes]
    return "\n".join(lines) + "\n"
