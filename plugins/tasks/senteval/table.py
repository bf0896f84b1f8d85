"""SentEval's sixteen tasks as the task plugin registers them: what each measures (the line
`harness list` shows), how its files are read (`reader`, a key of `loaders.READERS`) and how it
is evaluated (`procedure`, a key of `tasks.PROCEDURES`), in SentEval's order (senteval/binary.py,
sst.py, trec.py, mrpc.py, sick.py, sts.py). Where the files lie is SentEval's data layout
(`layout`), which `harness data senteval` prepares. Pure Python, so
registering the tasks stays cheap.
"""

from __future__ import annotations

from dataclasses import dataclass

from .layout import STS_YEARS


@dataclass(frozen=True)
class SentEvalTask:
    """One SentEval task: its name as SentEval and the reference tables spell it, how it is
    read and evaluated, and what it measures."""

    name: str
    reader: str
    procedure: str
    description: str


_ROWS: tuple[SentEvalTask, ...] = (
    SentEvalTask("MR", "binary", "cross-validated",
                 "movie review sentiment, binary; nested k-fold logistic regression (SentEval)"),
    SentEvalTask("CR", "binary", "cross-validated",
                 "product review sentiment, binary; nested k-fold logistic regression (SentEval)"),
    SentEvalTask("SUBJ", "binary", "cross-validated",
                 "subjective vs objective, binary; nested k-fold logistic regression (SentEval)"),
    SentEvalTask("MPQA", "binary", "cross-validated",
                 "opinion polarity, binary; nested k-fold logistic regression (SentEval)"),
    SentEvalTask("SST2", "sst-binary", "split",
                 "Stanford sentiment treebank, binary; dev-selected logistic regression (SentEval)"),
    SentEvalTask("SST5", "sst-fine", "split",
                 "Stanford sentiment treebank, 5 classes; dev-selected logistic regression"),
    SentEvalTask("TREC", "trec", "train-test",
                 "question type, 6 classes; k-fold on train, then test (SentEval)"),
    SentEvalTask("MRPC", "mrpc", "paraphrase",
                 "paraphrase detection on [|u-v|, u*v]; accuracy and F1 (SentEval)"),
    SentEvalTask("SICK-E", "sick-entailment", "split",
                 "entailment, 3 classes on [|u-v|, u*v]; dev-selected (SentEval)"),
    SentEvalTask("SICK-R", "sick-relatedness", "relatedness",
                 "relatedness 1-5, Tai et al. (2015) model; Pearson r (SentEval)"),
    SentEvalTask("STSB", "sts-benchmark", "relatedness",
                 "STS benchmark 0-5, Tai et al. (2015) model; Pearson r (SentEval)"),
    SentEvalTask("STS12", "sts", "similarity",
                 "semantic similarity 2012, cosine; Pearson/Spearman over 5 subsets (SentEval)"),
    SentEvalTask("STS13", "sts", "similarity",
                 "semantic similarity 2013 (no SMT), cosine; Pearson/Spearman over 3 subsets"),
    SentEvalTask("STS14", "sts", "similarity",
                 "semantic similarity 2014, cosine; Pearson/Spearman over 6 subsets (SentEval)"),
    SentEvalTask("STS15", "sts", "similarity",
                 "semantic similarity 2015, cosine; Pearson/Spearman over 5 subsets (SentEval)"),
    SentEvalTask("STS16", "sts", "similarity",
                 "semantic similarity 2016, cosine; Pearson/Spearman over 5 subsets (SentEval)"),
)

TASKS: dict[str, SentEvalTask] = {task.name: task for task in _ROWS}
"""SentEval's spelling of each task (the reference tables' column) -> its row, in table order."""

COMBINED_STS: tuple[str, ...] = STS_YEARS
"""STS12 ... STS16: the years whose mean headline score is the `STS` column of Vec2Sent's
Table 5 (`tasks.SemanticSimilarity.combined_columns`)."""
