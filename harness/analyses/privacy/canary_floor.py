"""The canaries' floor: the attacker of the control encoder whose vectors carry no information
(`random-gaussian`, found as the floor analysis finds it: `harness.analyses.floor.gains
.floor_encoder`), trained on its clean vectors, decoding and scoring the same canaries as every
studied encoder's attackers. What it recovers and how much exposure it gets comes from its
language model alone. It runs whether or not that encoder is studied (a control is studied only
with `comparison.controls: include`), in a job of its own after the floor encoder's (`floor_jobs`,
`floor_canaries`), whose attacker is the decoder that job trained already. The spec's check refuses
canaries without such an encoder (`harness.analyses.privacy.checks.check_canaries`)."""

from __future__ import annotations

from collections.abc import Sequence

from harness.analyses.floor.gains import floor_encoder
from harness.analyses.privacy.attacks import (
    AttackPlan,
    Attacks,
    Target,
    run_attacks,
    surrogate_needs,
)
from harness.analyses.privacy.canaries import Canary, drawn_canaries
from harness.analyses.privacy.canary_recovery import canary_recovery
from harness.analyses.privacy.results import EntityRecovery
from harness.analyses.privacy.spec import privacy_settings
from harness.protocols import DecoderView, Job, SpecView
from harness.spec import Component
from harness.stages.base import RunContext
from harness.stages.corpus import Corpus
from harness.stages.encode import encode_corpus
from harness.stages.train import train_decoder_for
from harness.stages.vocab import Vocab

FLOOR = "floor"
"""The part of the floor encoder's privacy job that decodes the canaries and runs every
attack on its clean vectors (`Job.part`)."""


def floor_jobs(spec: SpecView, name: str, attacker: DecoderView, clean: Job | None
               ) -> list[Job]:
    """The job, named `name`, of the floor encoder's attacker on the canaries and of every
    attack on its clean vectors; none without canaries or attacks. `clean` is the floor
    encoder's clean job when it is studied: whatever that job trains or runs, this one reads."""
    floor = floor_encoder(spec)
    section = privacy_settings(spec)
    if (not section.canaries and not section.attacks) or floor is None:
        return []
    trains = () if attacker.trains_for(floor) or clean is not None else (attacker.name,)
    after = (clean.name,) if clean is not None else ()
    return [Job(analysis=name, encoder=floor, part=FLOOR, trains=trains,
                needs=surrogate_needs(spec, floor) + after,
                what=f"the canaries and every attack on {floor}'s vectors (the floor)")]


def floor_attacks(ctx: RunContext, corpus: Corpus, vocab: Vocab, attacker: Component,
                  plan: AttackPlan, canaries: Sequence[Canary] = ()) -> Attacks | None:
    """What every attack of `plan` reads back from the floor encoder's clean vectors (no
    information: the prior, and whatever an attack brings of its own), and how each that ranks
    scores the `canaries`' candidates; None without attacks or a floor encoder."""
    floor = floor_encoder(ctx.spec)
    if not plan.entries or floor is None:
        return None
    (encoder,) = [e for e in ctx.spec.components("encoder") if e.name == floor]
    encoded = encode_corpus(ctx, encoder, corpus, vocab)
    trained = train_decoder_for(ctx, attacker, encoded, corpus, vocab)
    return run_attacks(ctx, corpus, vocab,
                       Target(encoded, attacker, trained, f"{floor} (the floor)"), plan,
                       canaries)


def floor_canaries(ctx: RunContext, corpus: Corpus, vocab: Vocab, attacker: Component,
                   ranked: Attacks | None = None) -> dict[str, EntityRecovery] | None:
    """Entity type -> the floor encoder's attacker's recovery and exposure of the canaries,
    undefended, the exposure the strongest of it and the attacks that ranked them (`ranked`,
    `floor_attacks`'); None without canaries or a floor encoder."""
    spec = ctx.spec
    floor = floor_encoder(spec)
    if not privacy_settings(spec).canaries or floor is None:
        return None
    (encoder,) = [e for e in spec.components("encoder") if e.name == floor]
    encoded = encode_corpus(ctx, encoder, corpus, vocab)
    trained = train_decoder_for(ctx, attacker, encoded, corpus, vocab)
    return canary_recovery(ctx, attacker, trained, encoded, vocab,
                           drawn_canaries(ctx, corpus, vocab.vocab, vocab.key),
                           ranked.ranked if ranked is not None else None)
