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

from harness.protocols import AnalysisParts, BuildContext, Options
from harness.registry.hookspecs import Register

PARTS = AnalysisParts(
    section="privacy", settings=f"{__name__}.spec:PrivacySection",
    results={"privacy": f"{__name__}.results:Privacy"},
    check=f"{__name__}.checks:check_privacy",
    components={"attacks": "attack", "defences": "defence"})
"""What the analysis brings besides its class, named as "module:attribute" so that registering
imports none of it (`harness.protocols.AnalysisParts`)."""


DESCRIPTION = (
    "leakage against utility of every encoder's vectors under each defence of "
    "`privacy.defences` (an attacker trained on the defended vectors), canaries")
"""What `harness list` says the analysis does."""


def register_analysis(register: Register) -> None:
    """Register the privacy analysis; its module is imported when a run builds it."""
    register("privacy", _build, description=DESCRIPTION, parts=PARTS)


def _build(options: Options, context: BuildContext) -> object:
    """A new privacy analysis (it reads its spec section, not options)."""
    from harness.analyses.privacy.analysis import PrivacyAnalysis

    return PrivacyAnalysis()
