"""Example v2s-harness plugin: what a third party ships to add encoders and a metric.

It registers a hashed bag-of-words encoder (`example-bow`), a trainable one weighting it by
inverse document frequency fitted on the run's text (`example-idf`, with an availability check
of its `stopwords:` file), a length metric (`example-length`), an analysis of how much shorter
or longer the regenerated sentences are (`example-length-gap`, with its spec section
`length_gap:`, its results field `length_gaps`, checks of the spec and the command
`harness length-gap`), an executor running each encoder's job in a pool of worker processes
(`example-processes`) and an attack reading each attacked vector back as the leaked training
sentence closest to it (`example-neighbours`, run by the privacy analysis when a spec's
`privacy.attacks:` names it).

This module is what the entry point `example` (group "harness") names. It is imported by every
`harness` command, so it stays cheap: only the hooks, the options, availability checks and lazy
factories live here; the implementations are imported the first time a run builds them, and
the analysis's parts (named as "module:attribute") the first time a spec or a results.json
needs them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import Field

from harness.plugin import AnalysisParts, BuildContext, Options, Register, RegisterCommand, hookimpl

if TYPE_CHECKING:
    from .bow import HashedBagOfWordsEncoder
    from .gap import LengthGapAnalysis
    from .idf import HashedTfIdfEncoder
    from .length import LengthMetric
    from .neighbours import NearestLeakedSentence
    from .processes import ProcessesExecutor

__version__ = "0.1.0"


class BagOfWordsOptions(Options):
    """Options of the hashed bag-of-words encoder (spec: `{name: example-bow, dim: 128}`)."""

    dim: int = Field(64, ge=1, le=1_000_000, description="number of hash buckets (vector size)")


def build_bow(options: BagOfWordsOptions, context: BuildContext) -> HashedBagOfWordsEncoder:
    """A new hashed bag-of-words encoder (needs no vocabulary and no weights)."""
    from .bow import HashedBagOfWordsEncoder

    return HashedBagOfWordsEncoder(dim=options.dim)


class IdfOptions(Options):
    """Options of the tf-idf encoder (spec: `{name: example-idf, dim: 128, stopwords: stop.txt}`)."""

    dim: int = Field(64, ge=1, le=1_000_000, description="number of hash buckets (vector size)")
    stopwords: Path | None = Field(None, description="file with one word per line, removed from "
                                   "every sentence before weighting (default: none)")


def idf_availability(options: IdfOptions | None = None) -> str | None:
    """None when `example-idf` can run with these options, else what to do: the stopwords file
    must exist. Cheap on purpose (one stat): `harness list` and `harness validate` call it."""
    if options is None or options.stopwords is None or options.stopwords.is_file():
        return None
    return (f"stopwords file {options.stopwords} not found; write the stopwords there, one per "
            "line, or remove the `stopwords:` option")


def build_idf(options: IdfOptions, context: BuildContext) -> HashedTfIdfEncoder:
    """A new, unfitted tf-idf encoder (the run fits it on its fit text)."""
    from .idf import HashedTfIdfEncoder

    return HashedTfIdfEncoder(dim=options.dim, stopwords=options.stopwords)


def build_length(options: Options, context: BuildContext) -> LengthMetric:
    """A new length-agreement metric."""
    from .length import LengthMetric

    return LengthMetric()


@hookimpl
def register_encoders(register: Register) -> None:
    """Register the hashed bag-of-words encoder and its tf-idf weighted, trainable variant."""
    register("example-bow", build_bow, options=BagOfWordsOptions,
             description="example plugin: l2-normalised counts of hashed lowercase tokens")
    register("example-idf", build_idf, options=IdfOptions, availability=idf_availability,
             trainable=True,
             description="example plugin: l2-normalised tf-idf of hashed lowercase tokens, "
                         "idf fitted on the run's text")


@hookimpl
def register_metrics(register: Register) -> None:
    """Register the length-agreement metric."""
    register("example-length", build_length, options=Options,
             description="example plugin: 100 * mean(1 - |len(hyp) - len(ref)| / max length)")


class ProcessesOptions(Options):
    """Options of the process-pool executor (spec: `executor: {name: example-processes,
    workers: 2}`)."""

    workers: int = Field(2, ge=1, description="worker processes, each running one encoder's "
                                              "job at a time")


def build_processes(options: ProcessesOptions, context: BuildContext) -> ProcessesExecutor:
    """A new process-pool executor."""
    from .processes import ProcessesExecutor

    return ProcessesExecutor(workers=options.workers)


@hookimpl
def register_executors(register: Register) -> None:
    """Register the process-pool executor."""
    register("example-processes", build_processes, options=ProcessesOptions,
             description="example plugin: each encoder's job in a pool of worker processes "
                         "on this machine")


def build_neighbours(options: Options, context: BuildContext) -> NearestLeakedSentence:
    """A new nearest-leaked-sentence attack (it has no options: what it is given is its threat
    model's, `NearestLeakedSentence.threat`)."""
    from .neighbours import NearestLeakedSentence

    return NearestLeakedSentence()


@hookimpl
def register_attacks(register: Register) -> None:
    """Register the nearest-leaked-sentence attack."""
    register("example-neighbours", build_neighbours, options=Options,
             description="example plugin: the leaked training sentence whose vector is closest "
                         "by cosine (all leaked pairs, nothing else)")


LENGTH_GAP = "example-length-gap"
"""The name the length-gap analysis registers under (`analyses: [..., example-length-gap]`)."""

LENGTH_GAP_PARTS = AnalysisParts(
    section="length_gap", settings="v2s_example_plugin.gap_spec:LengthGapSection",
    results={"length_gaps": "v2s_example_plugin.gap_results:LengthGaps"},
    resolve="v2s_example_plugin.gap_spec:resolve_baseline",
    check="v2s_example_plugin.gap_spec:check_decoder",
    preflight="v2s_example_plugin.gap_spec:baseline_problems")
"""What the length-gap analysis brings besides its class: its spec section `length_gap:`
validated by `LengthGapSection`, the results.json field `length_gaps` it fills, typed
`LengthGaps`, and its checks of a spec (`gap_spec`). Named as "module:attribute", so
registering imports none of them."""


def build_length_gap(options: Options, context: BuildContext) -> LengthGapAnalysis:
    """A new length-gap analysis (its settings are the spec's `length_gap:` section)."""
    from .gap import LengthGapAnalysis

    return LengthGapAnalysis()


@hookimpl
def register_analyses(register: Register) -> None:
    """Register the length-gap analysis with its parts."""
    register(LENGTH_GAP, build_length_gap, parts=LENGTH_GAP_PARTS,
             description="example plugin: regenerated minus input length per pair")


@hookimpl
def register_commands(register: RegisterCommand) -> None:
    """Register `harness length-gap RUN_DIR`."""
    from .commands import COMMANDS

    for command in COMMANDS:
        register(command)
