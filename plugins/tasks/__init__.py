"""First-party downstream tasks: SentEval's sixteen, MRPC-retrieval, and the quickstart's
synthetic suite.

Registered through the same `register_tasks` hook third-party tasks use. SentEval's tasks are the
rows of the plugin's task table (`senteval.table`), registered under their lower-cased names
(`sick-r`); the built task's `name` is spelled as SentEval and reference tables spell it
(`SICK-R`). `mrpc-retrieval` (`retrieval`), paraphrase retrieval over MRPC's test pairs by
recall@k, is no SentEval procedure and is registered on its own beside them. Registration
imports nothing heavy: each factory imports `senteval.tasks`, `retrieval` or `synthetic`
(numpy, torch, scikit-learn) when a run builds the task.

The plugin also adds `harness data senteval`, the downloader of SentEval's data
(`senteval.commands`), through the `register_commands` hook third-party commands use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness.plugin import Options, Register, RegisterCommand, hookimpl

from .options import ParaphraseRetrievalOptions, SyntheticOptions
from .senteval.table import TASKS

if TYPE_CHECKING:
    from harness.plugin import BuildContext

SYNTHETIC_DESCRIPTIONS: dict[str, str] = {
    "syn-order": "quickstart: is the person from name group A the agent? (word order; offline)",
    "syn-negation": "quickstart: does 'never' negate the main or the embedded clause? (offline)",
    "syn-topic": "quickstart: food, travel or capitals, 3 classes (lexical control; offline)",
    "syn-relatedness": "quickstart: pair relatedness 1-5 by construction, SICK-R procedure (offline)",
}

RETRIEVAL_DESCRIPTION = ("paraphrase retrieval over MRPC's test pairs: recall@k by cosine "
                         "(headline k=1, chance k/N; SentEval's MRPC file)")


def _senteval_factory(name: str) -> Any:
    def build(options: Options, context: BuildContext) -> Any:
        from .senteval.tasks import senteval_task

        return senteval_task(name)

    return build


def _synthetic_factory(name: str) -> Any:
    def build(options: SyntheticOptions, context: BuildContext) -> Any:
        from .synthetic import Sizes, synthetic_task

        sizes = Sizes(train=options.train, dev=options.dev, test=options.test)
        return synthetic_task(name, sizes, options.seed)

    return build


def _build_retrieval(options: ParaphraseRetrievalOptions, context: BuildContext) -> Any:
    from .retrieval import ParaphraseRetrieval

    return ParaphraseRetrieval(k=options.k)


@hookimpl
def register_tasks(register: Register) -> None:
    """Register SentEval's tasks, MRPC-retrieval and the quickstart's synthetic ones."""
    for name, task in TASKS.items():
        register(name.lower(), _senteval_factory(name), description=task.description,
                 options=Options)
    register("mrpc-retrieval", _build_retrieval, description=RETRIEVAL_DESCRIPTION,
             options=ParaphraseRetrievalOptions)
    for name, description in SYNTHETIC_DESCRIPTIONS.items():
        register(name, _synthetic_factory(name), description=description,
                 options=SyntheticOptions)


@hookimpl
def register_commands(register: RegisterCommand) -> None:
    """Register `harness data senteval`, which downloads SentEval's data."""
    from .senteval.commands import data_senteval

    register(data_senteval, group="data")
