"""The quickstart's downstream suite: seeded synthetic tasks in SentEval's file layout.

Built from the quickstart corpus' vocabulary and constructions (`harness.synthetic`), so that
correlations in the offline quickstart mean something. Each task is written in the layout of a
SentEval task and read and evaluated by the same loaders and procedures:

| task            | layout (as)  | label depends on                                              |
|-----------------|--------------|---------------------------------------------------------------|
| syn-order       | SST-2        | word order: is the person from name group A the agent? Active |
|                 |              | ("Anna saw Marco .") and passive ("Marco was seen by Anna .") |
|                 |              | voices; a bag of words cannot tell the classes apart          |
| syn-negation    | SST-2        | negation scope: "X never knew that Y saw Z" vs. "X knew that  |
|                 |              | Y never saw Z" (same bag of words)                            |
| syn-topic       | SST-5 (3)    | topic: food (habitual), travel, capitals                      |
| syn-relatedness | SICK (1-5)   | meaning of pairs: time phrase fronted 5, passive 4, negation  |
|                 |              | 3, roles swapped 2, unrelated 1 (SICK-R's procedure)          |

The files are a function of (task, seed, split sizes, `SUITE_VERSION`,
`harness.synthetic.GENERATOR_VERSION`): `SyntheticTask.data_key()` names them for the cache.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.plugin import Encode, HarnessError, TaskData, TaskResult
from harness.plugin import synthetic as corpus

from .senteval.layout import SICK_FILES, SST_FILES
from .senteval.loaders import load_sick, load_sst
from .senteval.tasks import TASKS_VERSION, DataSource, Relatedness, SplitClassification, Task

SUITE_VERSION = "1"
"""Bump whenever the generated files change (part of `data_key`)."""

MARKER = "synthetic.json"

GROUP_A = corpus.NAMES[0::2]
GROUP_B = corpus.NAMES[1::2]
TOPICS = ("habitual", "travel", "capital")
"""Quickstart constructions -> syn-topic classes 0 (food), 1 (travel), 2 (capitals)."""

_PROPER = frozenset([*corpus.NAMES, *corpus.WEEKDAYS,
                     *(word for country in corpus.COUNTRIES for word in country)])


@dataclass(frozen=True)
class Sizes:
    """Examples per split."""

    train: int = 1000
    dev: int = 200
    test: int = 400

    @property
    def total(self) -> int:
        """Return the number of examples over all splits."""
        return self.train + self.dev + self.test


def render(tokens: list[str]) -> str:
    """Return lowercase tokens as quickstart text: proper nouns and the first word capitalised."""
    words = [word.capitalize() if word in _PROPER else word for word in tokens]
    words[0] = words[0][:1].upper() + words[0][1:]
    return " ".join(words)


def passive_sentence(slots: corpus.TransitiveSlots) -> str:
    """Return the passive of a transitive event: 'Marco was seen by Anna yesterday .'."""
    auxiliary = "was" if slots.tense == corpus.PAST else "is"
    negation = [slots.negation] if slots.negation else []
    return render([*slots.patient.split(), auxiliary, *negation, slots.verb.participle, "by",
                   *slots.agent.split(), *slots.tail.split(), "."])


def _tail(rng: random.Random, tense: str) -> str:
    if rng.random() < 0.6:
        return ""
    if tense == corpus.PAST:
        return rng.choice(corpus.PAST_TIMES)
    return rng.choice(corpus.HABITUAL_TIMES)


def order_example(rng: random.Random, label: int) -> tuple[str, int]:
    """Return a sentence whose label is 1 when its group-A person is the agent."""
    a, b = rng.choice(GROUP_A), rng.choice(GROUP_B)
    agent, patient = (a, b) if label == 1 else (b, a)
    tense = rng.choice((corpus.PAST, corpus.PRESENT))
    slots = corpus.TransitiveSlots(agent=agent, verb=rng.choice(corpus.TRANSITIVE_VERBS),
                                   patient=patient, tense=tense, tail=_tail(rng, tense))
    if rng.random() < 0.5:
        return corpus.transitive_sentence(slots), label
    return passive_sentence(slots), label


def negation_example(rng: random.Random, label: int) -> tuple[str, int]:
    """Return 'X never knew that Y saw Z .' (label 1) or 'X knew that Y never saw Z .' (0).

    The label is the scope of the one "never": the main clause (the statement is negated) or the
    embedded one. Both classes have the same bag of words.
    """
    event = corpus.sample_transitive(rng)
    subject = corpus.sample_transitive(rng).agent
    while subject in (event.agent, event.patient):
        subject = corpus.sample_transitive(rng).agent
    main = [*subject.split(), rng.choice(corpus.MENTAL_VERBS).past, "that"]
    embedded = [*event.agent.split(), event.verb.past, *event.patient.split(), "."]
    if label == 1:
        main.insert(len(subject.split()), "never")
    else:
        embedded.insert(len(event.agent.split()), "never")
    return render(main + embedded), label


def topic_examples(count: int, seed: int) -> list[tuple[str, int]]:
    """Return `count` quickstart sentences labelled by topic, classes in equal numbers."""
    per_class = -(-count // len(TOPICS))
    draw = per_class * 20
    # A seed stream apart from the corpus' own seeds (the quickstart uses 1 and 2).
    corpus_seed = 7919 * seed + 104729
    while True:
        by_topic: dict[str, list[str]] = {topic: [] for topic in TOPICS}
        for construction, sentence in corpus.generate_examples("quickstart", draw, corpus_seed):
            if construction in by_topic and len(by_topic[construction]) < per_class:
                by_topic[construction].append(sentence)
        if all(len(sentences) == per_class for sentences in by_topic.values()):
            break
        draw *= 2
    examples = [(sentence, TOPICS.index(topic)) for topic, sentences in by_topic.items()
                for sentence in sentences]
    random.Random(seed).shuffle(examples)
    return examples[:count]


RELATEDNESS_LEVELS: tuple[tuple[float, str], ...] = (
    (5.0, "ENTAILMENT"), (4.0, "ENTAILMENT"), (3.0, "CONTRADICTION"), (2.0, "NEUTRAL"),
    (1.0, "NEUTRAL"))


def relatedness_example(rng: random.Random, level: int) -> tuple[str, str, float, str]:
    """Return (sentence A, sentence B, relatedness 1-5, entailment judgment) of one level.

    Level 0 (5): the same sentence with its time phrase fronted; 1 (4): its passive; 2 (3): its
    negation; 3 (2): agent and patient swapped; 4 (1): an unrelated quickstart sentence. Levels
    0 and 3 keep the bag of words, so only word order tells a paraphrase from its opposite.
    Scores are by construction, not human judgments.
    """
    slots = corpus.sample_transitive(rng)._replace(negation="")
    if not slots.tail or slots.tail.split()[0] in corpus.MANNER_ADVERBS:
        times = corpus.PAST_TIMES if slots.tense == corpus.PAST else corpus.HABITUAL_TIMES
        slots = slots._replace(tail=rng.choice(times))
    first = corpus.transitive_sentence(slots)
    if level == 0:
        second = render([*slots.tail.split(), *corpus.transitive_sentence(
            slots._replace(tail="")).lower().split()])
    elif level == 1:
        second = passive_sentence(slots)
    elif level == 2:
        second = corpus.transitive_sentence(slots._replace(negation="not"))
    elif level == 3:
        second = corpus.transitive_sentence(slots._replace(agent=slots.patient,
                                                           patient=slots.agent))
    else:
        construction, second = corpus.GENERATORS["quickstart"](rng)
        while construction in ("transitive", "passive"):
            construction, second = corpus.GENERATORS["quickstart"](rng)
    if rng.random() < 0.5:
        first, second = second, first
    score, judgment = RELATEDNESS_LEVELS[level]
    return first, second, score, judgment


def _unique(draw: Callable[[int], tuple], count: int, levels: int) -> list[tuple]:
    """Return `count` distinct examples, label i % levels for the i-th, redrawing duplicates."""
    seen: set[tuple] = set()
    examples = []
    for i in range(count):
        for _ in range(100):
            example = draw(i % levels)
            if example[:-1] not in seen:
                break
        seen.add(example[:-1])
        examples.append(example)
    return examples


def _split(examples: list, sizes: Sizes, rng: random.Random) -> dict[str, list]:
    rng.shuffle(examples)
    return {"train": examples[:sizes.train],
            "dev": examples[sizes.train:sizes.train + sizes.dev],
            "test": examples[sizes.train + sizes.dev:sizes.total]}


def _write_sst(directory: Path, splits: dict[str, list[tuple[str, int]]], binary: bool) -> None:
    for split, examples in splits.items():
        lines = [f"{s}\t{label}" if binary else f"{label} {s}" for s, label in examples]
        (directory / SST_FILES[split]).write_text("\n".join(lines) + "\n", encoding="utf-8")


def _write_sick(directory: Path, splits: dict[str, list[tuple[str, str, float, str]]]) -> None:
    for split, examples in splits.items():
        lines = ["pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment"]
        lines += [f"{i}\t{a}\t{b}\t{score:.1f}\t{judgment}"
                  for i, (a, b, score, judgment) in enumerate(examples, 1)]
        (directory / SICK_FILES[split]).write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_task(directory: Path, name: str, sizes: Sizes, seed: int) -> None:
    """Write synthetic task `name` into `directory` (which must exist)."""
    rng = random.Random(f"{name}:{seed}")
    if name == "syn-order":
        examples = _unique(lambda label: order_example(rng, label), sizes.total, 2)
        _write_sst(directory, _split(examples, sizes, rng), binary=True)
    elif name == "syn-negation":
        examples = _unique(lambda label: negation_example(rng, label), sizes.total, 2)
        _write_sst(directory, _split(examples, sizes, rng), binary=True)
    elif name == "syn-topic":
        _write_sst(directory, _split(topic_examples(sizes.total, seed), sizes, rng), binary=False)
    elif name == "syn-relatedness":
        examples = _unique(lambda level: relatedness_example(rng, level), sizes.total,
                           len(RELATEDNESS_LEVELS))
        _write_sick(directory, _split(examples, sizes, rng))
    else:
        raise HarnessError(f"unknown synthetic task {name!r}; known: "
                           f"{', '.join(SYNTHETIC_TASKS)}")


def data_key(name: str, sizes: Sizes, seed: int) -> str:
    """Return the name of the directory holding task `name` generated with these settings."""
    return (f"{name}-v{SUITE_VERSION}-g{corpus.GENERATOR_VERSION}-s{seed}-"
            f"{sizes.train}-{sizes.dev}-{sizes.test}")


def generate(directory: Path, name: str, sizes: Sizes, seed: int) -> Path:
    """Write task `name` into `directory` unless it is already there; return `directory`.

    Written into a temporary sibling and renamed, so `directory` is either complete or absent.
    """
    directory = Path(directory)
    key = data_key(name, sizes, seed)
    marker = directory / MARKER
    if marker.exists() and json.loads(marker.read_text(encoding="utf-8")).get("key") == key:
        return directory
    directory.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(dir=directory.parent, prefix=f".{directory.name}-"))
    try:
        write_task(scratch, name, sizes, seed)
        (scratch / MARKER).write_text(json.dumps({"key": key, "task": name}), encoding="utf-8")
        if directory.exists():
            shutil.rmtree(directory)
        os.replace(scratch, directory)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return directory


def _source(name: str) -> DataSource:
    def hint(directory: Path) -> str:
        return f"delete {directory} and run again to regenerate it"

    if name == "syn-relatedness":
        return DataSource(load=lambda d: load_sick(Path(d), name, "relatedness", hint(d)),
                          files=lambda d: [Path(d) / f for f in SICK_FILES.values()])
    n_classes = len(TOPICS) if name == "syn-topic" else 2
    return DataSource(load=lambda d: load_sst(Path(d), name, n_classes, hint(d)),
                      files=lambda d: [Path(d) / f for f in SST_FILES.values()])


SYNTHETIC_TASKS: dict[str, str] = {
    "syn-order": "binary: is the person from name group A the agent? (active and passive voice)",
    "syn-negation": "binary: does 'never' negate the main clause or the embedded one?",
    "syn-topic": "3 classes: food, travel or capitals (quickstart constructions)",
    "syn-relatedness": "pair relatedness 1-5: paraphrase, passive, negation, swapped roles",
}


@dataclass(frozen=True)
class SyntheticTask:
    """A synthetic task: a SentEval procedure over data the harness generates on demand."""

    name: str
    inner: Task
    sizes: Sizes = Sizes()
    seed: int = 1

    @property
    def version(self) -> str:
        """Return the version of loading and evaluation (the data has `data_key`)."""
        return f"{TASKS_VERSION}.{SUITE_VERSION}"

    def data_key(self) -> str:
        """Return what determines the generated files, usable as a directory name."""
        return data_key(self.name, self.sizes, self.seed)

    def generate(self, directory: Path) -> None:
        """Write the task's files into `directory` unless they are there already."""
        generate(directory, self.name, self.sizes, self.seed)

    def files(self, data_dir: Path) -> list[Path]:
        """Return the files the task reads from its generated directory."""
        return self.inner.files(data_dir)

    def load(self, data_dir: Path) -> TaskData:
        """Read the generated splits from `data_dir`."""
        return self.inner.load(data_dir)

    def evaluate(self, encode: Encode, data_dir: Path, *, config: str = "prototyping",
                 seed: int = 1111, device: str = "cpu") -> TaskResult:
        """Evaluate on the generated data in `data_dir` (call `generate(data_dir)` first)."""
        return self.inner.evaluate(encode, data_dir, config=config, seed=seed, device=device)


def synthetic_task(name: str, sizes: Sizes | None = None, seed: int = 1) -> SyntheticTask:
    """Return synthetic task `name` (see `SYNTHETIC_TASKS`)."""
    if name not in SYNTHETIC_TASKS:
        raise HarnessError(f"unknown synthetic task {name!r}; known: "
                           f"{', '.join(SYNTHETIC_TASKS)}")
    family = Relatedness if name == "syn-relatedness" else SplitClassification
    return SyntheticTask(name=name, inner=family(name=name, source=_source(name)),
                         sizes=sizes or Sizes(), seed=seed)


def write_suite(directory: Path, *, sizes: Sizes | None = None, seed: int = 1) -> dict[str, Path]:
    """Generate all four synthetic tasks under `directory`; return task -> its directory."""
    return {name: generate(Path(directory) / name, name, sizes or Sizes(), seed)
            for name in SYNTHETIC_TASKS}
