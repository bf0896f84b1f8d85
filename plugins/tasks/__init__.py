"""First-party downstream tasks: SentEval's sixteen, and the quickstart's synthetic suite.

Registered through the same `register_tasks` hook third-party tasks use. Registration imports
nothing heavy: each factory imports `harness.downstream` (numpy, torch, scikit-learn) when a run
builds the task. Registered names are lower case (`sick-r`); the built task's `name` is spelled
as SentEval and reference tables spell it (`SICK-R`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from harness.hookspecs import Register, hookimpl
from harness.protocols import Options

if TYPE_CHECKING:
    from harness.protocols import BuildContext

SENTEVAL_TASKS: tuple[tuple[str, str], ...] = (
    ("MR", "movie review sentiment, binary; nested k-fold logistic regression (SentEval)"),
    ("CR", "product review sentiment, binary; nested k-fold logistic regression (SentEval)"),
    ("SUBJ", "subjective vs objective, binary; nested k-fold logistic regression (SentEval)"),
    ("MPQA", "opinion polarity, binary; nested k-fold logistic regression (SentEval)"),
    ("SST2", "Stanford sentiment treebank, binary; dev-selected logistic regression (SentEval)"),
    ("SST5", "Stanford sentiment treebank, 5 classes; dev-selected logistic regression"),
    ("TREC", "question type, 6 classes; k-fold on train, then test (SentEval)"),
    ("MRPC", "paraphrase detection on [|u-v|, u*v]; accuracy and F1 (SentEval)"),
    ("SICK-E", "entailment, 3 classes on [|u-v|, u*v]; dev-selected (SentEval)"),
    ("SICK-R", "relatedness 1-5, Tai et al. (2015) model; Pearson r (SentEval)"),
    ("STSB", "STS benchmark 0-5, Tai et al. (2015) model; Pearson r (SentEval)"),
    ("STS12", "semantic similarity 2012, cosine; Pearson/Spearman over 5 subsets (SentEval)"),
    ("STS13", "semantic similarity 2013 (no SMT), cosine; Pearson/Spearman over 3 subsets"),
    ("STS14", "semantic similarity 2014, cosine; Pearson/Spearman over 6 subsets (SentEval)"),
    ("STS15", "semantic similarity 2015, cosine; Pearson/Spearman over 5 subsets (SentEval)"),
    ("STS16", "semantic similarity 2016, cosine; Pearson/Spearman over 5 subsets (SentEval)"),
)
"""SentEval name and description of each SentEval task (registered as the lower-cased name)."""

SYNTHETIC_DESCRIPTIONS: dict[str, str] = {
    "syn-order": "quickstart: is the person from name group A the agent? (word order; offline)",
    "syn-negation": "quickstart: does 'never' negate the main or the embedded clause? (offline)",
    "syn-topic": "quickstart: food, travel or capitals, 3 classes (lexical control; offline)",
    "syn-relatedness": "quickstart: pair relatedness 1-5 by construction, SICK-R procedure (offline)",
}


class SyntheticOptions(Options):
    """Options of a synthetic task: `tasks: [{name: syn-order, train: 2000}]`."""

    train: int = Field(1000, ge=20, description="generated training examples")
    dev: int = Field(200, ge=10, description="generated dev examples")
    test: int = Field(400, ge=10, description="generated test examples")
    seed: int = Field(1, description="seed of the generated data (not of the classifier)")


def _senteval_factory(name: str) -> Any:
    def build(options: Options, context: BuildContext) -> Any:
        from harness.downstream.tasks import senteval_task

        return senteval_task(name)

    return build


def _synthetic_factory(name: str) -> Any:
    def build(options: SyntheticOptions, context: BuildContext) -> Any:
        from harness.downstream.synthetic import Sizes, synthetic_task

        sizes = Sizes(train=options.train, dev=options.dev, test=options.test)
        return synthetic_task(name, sizes, options.seed)

    return build


@hookimpl
def register_tasks(register: Register) -> None:
    """Register SentEval's tasks and the quickstart's synthetic ones."""
    for name, description in SENTEVAL_TASKS:
        register(name.lower(), _senteval_factory(name), description=description, options=Options)
    for name, description in SYNTHETIC_DESCRIPTIONS.items():
        register(name, _synthetic_factory(name), description=description,
                 options=SyntheticOptions)
