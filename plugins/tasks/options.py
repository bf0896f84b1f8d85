"""Options of the first-party tasks (pydantic only: registration imports this module)."""

from __future__ import annotations

from pydantic import Field

from harness.plugin import Options


class SyntheticOptions(Options):
    """Options of a synthetic task: `tasks: [{name: syn-order, train: 2000}]`."""

    train: int = Field(1000, ge=20, description="generated training examples")
    dev: int = Field(200, ge=10, description="generated dev examples")
    test: int = Field(400, ge=10, description="generated test examples")
    seed: int = Field(1, description="seed of the generated data (not of the classifier)")


class ParaphraseRetrievalOptions(Options):
    """Options of `mrpc-retrieval`: `tasks: [{name: mrpc-retrieval, k: 5}]`."""

    k: int = Field(1, ge=1, description="headline recall@k: percent of queries whose paraphrase "
                                        "is among the k nearest by cosine")
