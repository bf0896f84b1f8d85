"""Probes of a spec's trained decoders (Kerscher & Eger 2020, section 4 and Table 2), one module
per concern:

- `queries`: what `harness generate` and `harness analogy` ask for: regenerate sentences,
  solve one analogy, a whole analogy set or a vector expression, interpolate two sentences;
- `analogies`: analogy sets (TSV files), solved and scored; `interpolation`: interpolation
  paths and their summaries; `noise`: decoding noisy test vectors (noise robustness);
- `expression`: the safe parser and evaluator of `--expr`;
- `pairs`: the trained encoder x decoder pairs the probes decode with;
- `scoring`: exact match, BLEU and rates with exact intervals; `results`: the typed results
  (results.json `probes`); `text`: a solved analogy set as `harness analogy --file` prints it.

The `probes:` section of a spec runs analogies, interpolation and noise as a stage of
`harness run` (`harness.analyses.probes.probing`). The public names are importable from here; they are
loaded on first use, so `harness.results.model` can import `harness.analyses.probes.results` cheaply.
"""

from __future__ import annotations

from harness.analyses.registration import Registration
from harness.lazy import lazy_exports
from harness.protocols import AnalysisParts

__getattr__, __all__ = lazy_exports(__name__, {
    "Probe": "queries", "ProbeResult": "queries", "AnalogySetRun": "queries",
    "SolvedSet": "queries", "generate": "queries", "analogy": "queries",
    "analogy_set": "queries", "decode_expression": "queries", "interpolate": "queries",
    "ProbedPair": "pairs", "trained_pairs": "pairs",
    "AnalogyItem": "analogies", "AnalogySet": "analogies", "read_analogy_set": "analogies",
    "ExpressionError": "expression", "PairProbes": "results",
})


PARTS = AnalysisParts(
    section="probes", settings=f"{__name__}.spec:ProbesSection",
    results={"probes": f"{__name__}.results:ProbeResults"},
    resolve=f"{__name__}.checks:resolve_probes",
    preflight=f"{__name__}.checks:probe_problems")
"""What the analysis brings besides its class, named as "module:attribute" so that registering
imports none of it (`harness.protocols.AnalysisParts`)."""


ANALYSIS = Registration(
    package=__name__, name="probes", cls="ProbesAnalysis",
    description=(
        "analogies, interpolation and noise robustness decoded by each pair "
        "(`probes:`)"
    ),
    parts=PARTS,
    commands=True,
)
"""How the probes analysis registers (`harness.analyses.registration`)."""
