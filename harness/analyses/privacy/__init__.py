"""The privacy analysis: its spec section (`spec`, `privacy:`) and its checks (`checks`), the
canaries (`entities` their values and frames, `canaries` the sentences and recovery,
`exposure`, `canary_recovery` under one attacker, `canary_floor` the floor's, `canary_report`
their section), one privacy point: the attacker on one set of vectors (`point`) and the spec's
attacks run on them (`attacks`), the whole study (`study`), its records (`results`), report
sections and figure (`report`); the defences of `privacy.defences` applied to the vectors
(`defend`; the defences themselves are plugins, `register_defences`).
`analysis.PrivacyAnalysis` is what the runner calls.
"""

from __future__ import annotations

from harness.analyses.registration import Registration
from harness.protocols import AnalysisParts

PARTS = AnalysisParts(
    section="privacy", settings=f"{__name__}.spec:PrivacySection",
    results={"privacy": f"{__name__}.results:Privacy"},
    check=f"{__name__}.checks:check_privacy",
    components={"attacks": "attack", "defences": "defence"})
"""What the analysis brings besides its class, named as "module:attribute" so that registering
imports none of it (`harness.protocols.AnalysisParts`)."""


ANALYSIS = Registration(
    package=__name__, name="privacy", cls="PrivacyAnalysis",
    description=(
        "leakage against utility of every encoder's vectors under each defence of "
        "`privacy.defences` (an attacker trained on the defended vectors), canaries"
    ),
    parts=PARTS,
)
"""How the privacy analysis registers (`harness.analyses.registration`)."""
