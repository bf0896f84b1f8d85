"""Every attack of the spec's `privacy.attacks:` on one encoder's vectors, clean or defended:
each handed only what its threat model grants (`harness.protocols.ThreatModel`), its reading of
the test vectors kept as a cached artifact, and scored like a decoder's output: by the
content-word measure every attack yields (`privacy.compare_on`, `token-f1:content`) and, for an
attack that writes sentences, by every other metric of the spec that needs only the text. The
strongest attack is the one with the highest score on that measure. An attack that can rank
candidate texts (`harness.protocols.Ranker`) also ranks the canaries' candidates, in the same
artifact: the exposure it gets (`harness.analyses.privacy.exposure`)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from harness.analyses.privacy.canaries import Canary, candidate_lists, variants_digest
from harness.analyses.privacy.defend import DefendedEncoder
from harness.analyses.privacy.exposure import nested
from harness.analyses.privacy.results import AttackLeakage
from harness.analyses.privacy.spec import privacy_settings
from harness.errors import HarnessError, PluginError, plugin_call
from harness.protocols import (
    Attack,
    AttackInputs,
    BuildContext,
    Inversion,
    Ranker,
    SpecView,
    ThreatModel,
    inversion_problem,
    inversion_texts,
    ranking_problem,
    threat_model,
    ungranted_use,
)
from harness.spec import Component, Entry, encode_batch_size
from harness.stages.base import RunContext
from harness.stages.corpus import Corpus
from harness.stages.encode import Encoded
from harness.stages.generate import (
    SAMPLES_FILE,
    Samples,
    decode,
    load_trained_decoder,
    read_samples,
    write_samples,
)
from harness.stages.score import scored
from harness.stages.train import TrainedDecoder
from harness.stages.vocab import Vocab

VERSION = 2  # 2: queries noised per call; attacks that rank score the canaries
INVERSION_FILE = "inversion.json"
RANKED_FILE = "canary-scores.json"
"""A ranking attack's score of every canary's candidates (per canary, per entity)."""
STEP_FILE = "step-{step}.jsonl"
"""An iterative attack's best sentences after each step (`Inversion.steps`)."""


@dataclass(frozen=True)
class Surrogate:
    """Another encoder of the run as an attacker's own: its vectors of the training text and
    the decoder trained on them (for `ThreatModel.surrogate`)."""

    encoded: Encoded
    trained: TrainedDecoder


@dataclass(frozen=True)
class AttackPlan:
    """The attacks a run runs on every point: the resolved entries of `privacy.attacks`, the
    surrogate encoder an attack may ask for (`surrogate(name)`, None: the run's choice), the
    measure that names the strongest (`privacy.compare_on`: word leakage) and the one that
    names the strongest of those that write sentences (`text_measure`: text recovery; None:
    no text verdict)."""

    entries: Sequence[Entry]
    surrogate: Callable[[str | None], Surrogate | None]
    compare_on: str
    text_on: str | None = None


@dataclass(frozen=True)
class Target:
    """What is attacked: an encoder's vectors as the store holds them (`encoded`, clean or
    defended), and the adaptive decoder trained on them (`trained`, by `attacker`)."""

    encoded: Encoded
    attacker: Component
    trained: TrainedDecoder
    label: str
    """The point, for errors and the log: "avg under laplace at epsilon 10"."""


def surrogate_needs(spec: SpecView, attacked: str) -> tuple[str, ...]:
    """The encoders whose vectors and decoder the attacks of `privacy.attacks` read as a
    surrogate when attacking `attacked` (`ThreatModel.surrogate`): a job that runs them needs
    those encoders' jobs first."""
    context = BuildContext(seed=spec.seed)
    found = []
    for entry in privacy_settings(spec).attacks:
        attack = entry.build(context)
        threat = getattr(attack, "threat", None)
        if isinstance(threat, ThreatModel) and threat.surrogate:
            chosen = surrogate_name(spec, attacked, getattr(attack, "surrogate", None))
            if chosen is not None:
                found.append(chosen)
    return tuple(dict.fromkeys(found))


def surrogate_name(spec: SpecView, attacked: str, asked: str | None) -> str | None:
    """The surrogate encoder an attack on `attacked` reads: the one it asks for by name, else
    the first other encoder under study (None when there is none); an error naming the
    encoders when it asks for one the spec lacks."""
    encoders = [e.name for e in spec.components("encoder")]
    chosen = asked or next((e for e in spec.studied(encoders) if e != attacked), None)
    if chosen is not None and (chosen not in encoders or chosen == attacked):
        raise HarnessError(f"privacy.attacks: surrogate {chosen!r} is not another encoder "
                           f"of the spec ({', '.join(e for e in encoders if e != attacked)})")
    return chosen


@dataclass(frozen=True)
class Attacks:
    """Every attack of a plan on one target: attack label -> what it leaked (`leakage`), the
    file of what it read back (`outputs`: JSON lines of `reference` and `hypothesis`, in the
    cache) and, for an attack that ranks (`Ranker`), its score of every canary's candidates,
    per canary, per entity, higher the likelier (`ranked`)."""

    leakage: dict[str, AttackLeakage]
    outputs: dict[str, Path]
    ranked: dict[str, list[list[list[float]]]] = field(default_factory=dict)


def run_attacks(ctx: RunContext, corpus: Corpus, vocab: Vocab, target: Target,
                plan: AttackPlan, canaries: Sequence[Canary] = ()) -> Attacks:
    """Every attack of `plan` on `target`: what each leaked, where its output lies, and how
    each that ranks scores the `canaries`' candidates."""
    found: dict[str, AttackLeakage] = {}
    outputs: dict[str, Path] = {}
    ranked: dict[str, list[list[list[float]]]] = {}
    for entry in plan.entries:
        attack = ctx.build(entry, f"for {target.label}")
        try:
            threat = threat_model(attack)
        except TypeError as exc:
            raise PluginError(entry.plugin, f"attack {entry.name!r}: {exc}") from None
        if not isinstance(attack, Attack):
            raise PluginError(entry.plugin, f"attack {entry.name!r} lacks fit or invert "
                                            "(harness.protocols.Attack)")
        label = str(getattr(attack, "label", entry.name))
        if label in found:
            raise PluginError(entry.plugin, f"two attacks of privacy.attacks are both called "
                                            f"{label!r}: give them different options")
        helper = (plan.surrogate(getattr(attack, "surrogate", None)) if threat.surrogate
                  else None)
        if threat.surrogate and helper is None:
            raise HarnessError(f"attack {label!r} on {target.label}: it needs a surrogate "
                               "encoder and the run has no other encoder under study to be one")
        samples, words_only, steps, ranking = _inversion(ctx, corpus, vocab, target, entry,
                                                         attack, label, helper, canaries)
        outputs[label] = samples.path
        if ranking is not None:
            ranked[label] = ranking
        metrics = [m for m in ctx.spec.metrics if not m.info.needs
                   and (m.name == plan.compare_on or not words_only)]
        scores = {m.name: scored(ctx, m, samples)[0] for m in metrics}
        compared = [m for m in metrics if m.name == plan.compare_on]
        found[label] = AttackLeakage(
            attack=entry.name, threat=threat.describe(), leaked=_leaked(threat, corpus),
            options=entry.settings.model_dump(mode="json"),
            sentences=not words_only, leakage=scores,
            steps=[scored(ctx, compared[0], step)[0] for step in steps] if steps and compared
            else None)
    return Attacks(found, outputs, ranked)


def strongest(attacks: dict[str, AttackLeakage], compare_on: str, *,
              sentences: bool = False) -> str | None:
    """The label of the attack with the highest `compare_on` score (the first among equals),
    among those that write sentences with `sentences`, or None when none has one."""
    scored_ = [(label, value) for label, a in attacks.items() if compare_on in a.leakage
               and (a.sentences or not sentences)
               and (value := a.leakage[compare_on].value) is not None]
    return max(scored_, key=lambda item: item[1])[0] if scored_ else None


def _inversion(ctx: RunContext, corpus: Corpus, vocab: Vocab, target: Target, entry: Entry,
               attack: Any, label: str, surrogate: Surrogate | None,
               canaries: Sequence[Canary] = ()
               ) -> tuple[Samples, bool, list[Samples], list[list[list[float]]] | None]:
    """The attack's reading of the test vectors as samples (sentences, or its words joined),
    from the cache or computed; whether it gave words only; an iterative attack's best
    sentences after each step, as samples (none for another attack); and, for an attack that
    ranks, its scores of the canaries' candidates (None for another, or without canaries)."""
    threat = threat_model(attack)
    encoded = target.encoded
    leaked = _leaked(threat, corpus)
    parts: dict[str, Any] = {"version": VERSION, "attack": entry.identity(), "label": label,
                             "train": encoded.keys["train"], "test": encoded.keys["test"],
                             "leaked": leaked, "seed": ctx.spec.seed}
    if threat.decoder:
        parts["decoder"] = {"trained": target.trained.key,
                            "generation": ctx.spec.generation.model_dump()}
    if surrogate is not None:
        parts["surrogate"] = {"encoded": surrogate.encoded.keys["train"],
                              "trained": surrogate.trained.key}
    ranks = bool(canaries) and isinstance(attack, Ranker)
    if ranks:
        parts["canaries"] = {"sentences": [c.sentence for c in canaries],
                             "variants": variants_digest(canaries)}

    def build(directory: Path) -> dict[str, Any]:
        inputs = _inputs(ctx, corpus, vocab, target, threat, leaked, surrogate,
                         directory / "work", label)
        what = f"attack {label!r} on {target.label}"
        with _granted(entry.plugin, f"{what}: fit", threat):
            attack.fit(inputs)
        with _granted(entry.plugin, f"{what}: invert", threat):
            inversion = attack.invert(np.asarray(encoded.vectors("test"), dtype=np.float32))
        inversion = _checked(inversion, len(corpus.test), entry.plugin, what)
        hypotheses, steps = inversion_texts(inversion), inversion.steps or []
        write_samples(directory / SAMPLES_FILE, corpus, hypotheses)
        for step, sentences in enumerate(steps):
            write_samples(directory / STEP_FILE.format(step=step), corpus, sentences)
        (directory / INVERSION_FILE).write_text(json.dumps(
            {"sentences": inversion.sentences, "words": inversion.words,
             "scores": inversion.scores, "steps": inversion.steps}, ensure_ascii=False),
            encoding="utf-8")
        if ranks:
            with _granted(entry.plugin, f"{what}: likelihood of the canaries", threat):
                scores = _canary_scores(attack, encoded, canaries, encode_batch_size(ctx.spec),
                                        entry.plugin, what)
            (directory / RANKED_FILE).write_text(json.dumps(scores), encoding="utf-8")
        return {"sentences": len(hypotheses), "words_only": inversion.sentences is None,
                "steps": len(steps)}

    directory = ctx.cache.produce("attack", parts, build,
                                  label=f"{label} on {target.label}")
    summary = json.loads((directory / "meta.json").read_text(encoding="utf-8"))["summary"]

    def samples(name: str, key: str) -> Samples:
        return Samples(encoder=encoded.encoder, decoder=f"attack:{label}", key=key,
                       path=directory / name, records=read_samples(directory / name),
                       sentences_per_s=0.0)

    scores = (nested(canaries, json.loads((directory / RANKED_FILE).read_text(
        encoding="utf-8"))) if ranks else None)
    return (samples(SAMPLES_FILE, directory.name), bool(summary["words_only"]),
            [samples(STEP_FILE.format(step=step), f"{directory.name}-step{step}")
             for step in range(summary.get("steps", 0))], scores)


def _canary_scores(attack: Ranker, encoded: Encoded, canaries: Sequence[Canary],
                   batch_size: int, plugin: str, what: str) -> list[list[float]]:
    """A ranking attack's scores of each (canary, entity)'s candidates given the canary's
    vector as the store holds it (its record's noise, keyed by its text), flat in
    `candidate_lists`' order; a plugin error naming what is wrong with them."""
    rows, lists = candidate_lists(canaries)
    vectors = np.asarray(encoded.encode([c.sentence for c in canaries], batch_size=batch_size),
                         dtype=np.float32)
    scores = attack.likelihood(vectors[np.array(rows, dtype=np.int64)], lists)
    problem = ranking_problem(scores, lists)
    if problem is not None:
        raise PluginError(plugin, f"{what}: {problem} (one score per candidate sentence)")
    return [[float(v) for v in row] for row in scores]


@contextmanager
def _granted(plugin: str, what: str, threat: ThreatModel) -> Iterator[None]:
    """`plugin_call`, and an attack that uses an input its threat model does not grant (None)
    told which grant to declare (`ungranted_use`)."""
    try:
        with plugin_call(plugin, what):
            yield
    except PluginError as error:
        hint = ungranted_use(error.__cause__ or error, threat)
        if hint is None:
            raise
        raise PluginError(plugin, f"{what}: {hint}") from error.__cause__


def _leaked(threat: ThreatModel, corpus: Corpus) -> int:
    """How many leaked pairs an attack with `threat` is handed: the first of the training
    split."""
    return len(corpus.train) if threat.leaked is None else min(threat.leaked, len(corpus.train))


def _inputs(ctx: RunContext, corpus: Corpus, vocab: Vocab, target: Target, threat: Any,
            leaked: int, surrogate: Surrogate | None, workdir: Path, label: str
            ) -> AttackInputs:
    """What the threat model grants, and nothing else."""
    encoded = target.encoded
    workdir.mkdir(parents=True, exist_ok=True)
    batch = encode_batch_size(ctx.spec)
    query = (_query(encoded, batch, f"attack {label!r} on {target.label}") if threat.queries
             else None)
    decoder = (_decoder(ctx, vocab, target.attacker, target.trained, encoded)
               if threat.decoder else None)
    return AttackInputs(
        texts=list(corpus.train[:leaked]),
        vectors=np.asarray(encoded.vectors("train")[:leaked], dtype=np.float32),
        seed=ctx.spec.seed, workdir=workdir, device=ctx.device, query=query,
        public=list(corpus.train) if threat.public else None, decode=decoder,
        surrogate_vectors=(np.asarray(surrogate.encoded.vectors("train")[:leaked],
                                      dtype=np.float32) if surrogate else None),
        surrogate_decode=(_decoder(ctx, vocab, target.attacker, surrogate.trained,
                                   surrogate.encoded) if surrogate else None))


def _query(encoded: Encoded, batch_size: int, caller: str
           ) -> Callable[[Sequence[str]], np.ndarray]:
    """Black-box access to the attacked store: texts through the encoder and the defence at
    the attacked level, each call's noise drawn afresh (`DefendedEncoder.query`, keyed by
    `caller` and the call's number), never a stored record's."""
    model = encoded.model
    if model is None:
        raise HarnessError(f"{caller}: an attack with query access needs the encoder's model, "
                           "which this run did not build")
    calls = itertools.count()

    def query(texts: Sequence[str]) -> np.ndarray:
        if isinstance(model, DefendedEncoder):
            return model.query(list(texts), f"{caller}#{next(calls)}", batch_size=batch_size)
        return np.asarray(encoded.encode(list(texts), batch_size=batch_size), dtype=np.float32)

    return query


def _decoder(ctx: RunContext, vocab: Vocab, component: Component, trained: TrainedDecoder,
             encoded: Encoded) -> Callable[[np.ndarray, int], list[list[str]]]:
    """`decode(vectors, k)`: the decoder's best sentence for each vector under the spec's
    `generation:` settings, then k - 1 more drawn from it (distinct, best first)."""
    from harness.generation.sampling import sample_sentences

    model = load_trained_decoder(ctx, component, trained, encoded, vocab)
    section, words = ctx.spec.generation, vocab.vocab

    def run(vectors: np.ndarray, k: int) -> list[list[str]]:
        best = [words.decode(h.ids) for h in decode(model, vectors, section, vocab,
                                                    ctx.device)]
        if k <= 1:
            return [[sentence] for sentence in best]
        drawn = sample_sentences(model, vectors, count=k - 1, bos_id=words.bos_id,
                                 eos_id=words.eos_id, max_len=section.max_len,
                                 batch_size=section.batch_size, device=ctx.device,
                                 seed=ctx.spec.seed)
        return [list(dict.fromkeys([first, *(words.decode(ids) for ids in more)]))
                for first, more in zip(best, drawn, strict=True)]

    return run


def _checked(inversion: Any, count: int, plugin: str, what: str) -> Inversion:
    """`inversion` as an attack's reading of the `count` test vectors, or a plugin error
    naming what is wrong (`harness.protocols.inversion_problem`)."""
    problem = inversion_problem(inversion, count)
    if problem is not None:
        raise PluginError(plugin, f"{what}: {problem} (one entry per test vector, in order)")
    return inversion
