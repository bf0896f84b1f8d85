"""The fit loop of the multi-view objectives: ordered corpus, batches, Adam, checkpoints.

Adam with gradient clipping (multi-view section 3; Tang & de Sa appendix A). Batch order and
negative samples come from a generator seeded by (seed, epoch), and a checkpoint is written after
every epoch, so a killed fit resumes after its last epoch and ends with the same weights as an
uninterrupted one (on CPU).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch
from safetensors.torch import load_file, save_file
from torch import nn
from tqdm.auto import tqdm

from harness.plugin import DataError

from .objectives import Batch, DiscriminativeObjective, GenerativeObjective, neighbour_mask
from .word_vectors import ABSENT, WordVectors

Kind = Literal["generative", "discriminative"]

STATE_FILE = "state.json"


@dataclass(frozen=True)
class TrainingConfig:
    """Everything that determines the training steps besides the data and the initial weights."""

    kind: Kind
    epochs: int
    batch_size: int          # N
    lr: float
    clip: float              # gradient-norm threshold, 0 = off
    seed: int
    negatives: int = 5       # K, generative
    window: int = 3          # c, discriminative


@dataclass(frozen=True)
class OrderedCorpus:
    """Word ids of consecutive sentences and the document each belongs to.

    Built from ordered text where blank lines separate documents; adjacent sentences of one
    document are neighbours, and no pair crosses a blank line.
    """

    ids: list[np.ndarray]
    documents: np.ndarray

    @classmethod
    def from_sentences(cls, sentences: Sequence[str], words: WordVectors,
                       max_words: int | None = None) -> OrderedCorpus:
        """Return the corpus of `sentences`, each cut to its first `max_words` words."""
        ids: list[np.ndarray] = []
        documents: list[int] = []
        document, previous_blank = 0, False
        for sentence in sentences:
            if not sentence.strip():
                previous_blank = True
                continue
            if previous_blank and ids:
                document += 1
            previous_blank = False
            row = words.ids(sentence)[:max_words]
            ids.append(np.asarray(row, dtype=np.int64))
            documents.append(document)
        return cls(ids, np.asarray(documents, dtype=np.int64))

    def __len__(self) -> int:
        return len(self.ids)

    def next_sentence_pairs(self) -> np.ndarray:
        """Return the indices i of (s_i, s_{i+1}) pairs in one document where s_i has words and
        s_{i+1} has at least one in-vocabulary word to predict."""
        if len(self) < 2:
            return np.zeros(0, dtype=np.int64)
        same = self.documents[:-1] == self.documents[1:]
        has_words = np.fromiter((len(r) > 0 for r in self.ids[:-1]), bool, len(self) - 1)
        has_targets = np.fromiter((bool((r != ABSENT).any()) for r in self.ids[1:]), bool,
                                  len(self) - 1)
        return np.flatnonzero(same & has_words & has_targets)


def _padded(rows: Sequence[np.ndarray]) -> tuple[torch.Tensor, torch.Tensor]:
    """Return (ids (B, T) padded with 0, lengths (B,))."""
    lengths = torch.tensor([len(r) for r in rows], dtype=torch.long)
    ids = torch.zeros(len(rows), int(lengths.max()) if len(rows) else 0, dtype=torch.long)
    for i, row in enumerate(rows):
        ids[i, :len(row)] = torch.from_numpy(row)
    return ids, lengths


def epoch_generator(seed: int, epoch: int) -> torch.Generator:
    """Return the generator of one epoch: the same batches and samples when an epoch reruns."""
    return torch.Generator().manual_seed(seed * 1_000_003 + epoch)


def generative_batches(corpus: OrderedCorpus, pairs: np.ndarray, config: TrainingConfig,
                       noise: torch.Tensor, generator: torch.Generator) -> Iterator[Batch]:
    """Yield shuffled batches of N (s_i, words of s_{i+1}, K noise words per word) pairs."""
    order = pairs[torch.randperm(len(pairs), generator=generator).numpy()]
    for start in range(0, len(order), config.batch_size):
        index = order[start:start + config.batch_size]
        word_ids, lengths = _padded([corpus.ids[i] for i in index])
        targets, _ = _padded([r[r != ABSENT] for r in (corpus.ids[i + 1] for i in index)])
        samples = torch.multinomial(noise, targets.numel() * config.negatives, replacement=True,
                                    generator=generator)
        yield Batch(word_ids, lengths, target_ids=targets,
                    noise_ids=samples.view(*targets.shape, config.negatives))


def discriminative_batches(corpus: OrderedCorpus, config: TrainingConfig,
                           generator: torch.Generator) -> Iterator[Batch]:
    """Yield runs of N consecutive sentences, in shuffled order, with their neighbour masks.

    Each epoch starts the runs at a random offset, so that pairs cut by a run boundary in one
    epoch fall inside a run in another.
    """
    size = config.batch_size
    offset = int(torch.randint(size, (1,), generator=generator)) if len(corpus) > size else 0
    starts = [0] + list(range(offset, len(corpus), size)) if offset else \
        list(range(0, len(corpus), size))
    runs = [(a, min(b, len(corpus))) for a, b in zip(starts, starts[1:] + [len(corpus)])]
    runs = [(a, b) for a, b in runs if b - a >= 2]
    for k in torch.randperm(len(runs), generator=generator).tolist():
        a, b = runs[k]
        word_ids, lengths = _padded(corpus.ids[a:b])
        yield Batch(word_ids, lengths,
                    positives=neighbour_mask(corpus.documents[a:b], config.window))


def fit_objective(objective: GenerativeObjective | DiscriminativeObjective,
                  corpus: OrderedCorpus, config: TrainingConfig, *,
                  noise: np.ndarray | None = None, checkpoint_dir: Path | None = None,
                  device: str | torch.device = "cpu", progress: bool = True,
                  label: str = "multiview") -> list[dict[str, Any]]:
    """Return the per-epoch history of training `objective` on `corpus` (and leave it trained).

    Adam (lr `config.lr`), gradient-norm clipping, `objective.after_step()` after every step.
    With `checkpoint_dir`, the state after each epoch is saved there and training resumes after
    the last saved epoch; a directory written with another config is refused.
    `noise` is P_e(w) over word ids (generative objective); `label` names the encoder in
    progress bars and errors.
    """
    device = torch.device(device)
    objective.to(device)
    params = [p for p in objective.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(params, lr=config.lr)
    # Epochs are left out: a checkpoint of a shorter run is the start of a longer one.
    settings = {k: v for k, v in asdict(config).items() if k != "epochs"}
    settings["sentences"] = len(corpus)
    history: list[dict[str, Any]] = []
    if checkpoint_dir is not None:
        history = _resume(Path(checkpoint_dir), objective, optimizer, settings, device)
        if len(history) > config.epochs:
            raise DataError(f"{checkpoint_dir}: checkpoint after epoch {len(history)}, beyond "
                            f"the {config.epochs} requested: delete it or ask for more epochs")

    if config.kind == "generative":
        if noise is None:
            raise ValueError("the generative objective needs the noise distribution")
        pairs = corpus.next_sentence_pairs()
        if len(pairs) == 0:
            raise DataError(f"{label}: the fit corpus has no pair of adjacent sentences in one "
                            "document with in-vocabulary words: give corpus.fit an ordered text")
        noise_t = torch.as_tensor(noise, dtype=torch.float64)
    elif len(corpus) < 2:
        raise DataError(f"{label}: the fit corpus has fewer than two sentences: give "
                        "corpus.fit an ordered text")

    for epoch in range(len(history) + 1, config.epochs + 1):
        generator = epoch_generator(config.seed, epoch)
        batches = (generative_batches(corpus, pairs, config, noise_t, generator)
                   if config.kind == "generative"
                   else discriminative_batches(corpus, config, generator))
        objective.train()
        total, steps, started = 0.0, 0, time.perf_counter()
        bar = tqdm(batches, desc=f"{label} epoch {epoch}/{config.epochs}", unit="batch",
                   leave=False, disable=None if progress else True)
        for batch in bar:
            loss = objective.loss(batch.to(device))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if config.clip > 0:
                nn.utils.clip_grad_norm_(params, config.clip)
            optimizer.step()
            objective.after_step()
            total += float(loss.detach())
            steps += 1
            if steps % 20 == 0:
                bar.set_postfix(loss=f"{total / steps:.4f}", refresh=False)
        bar.close()
        history.append({"epoch": epoch, "loss": total / max(steps, 1), "steps": steps,
                        "seconds": round(time.perf_counter() - started, 2)})
        if checkpoint_dir is not None:
            _save(Path(checkpoint_dir), objective, optimizer, settings, history)
    objective.eval()
    return history


# --- checkpoints -------------------------------------------------------------------------------

def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _save(directory: Path, objective: nn.Module, optimizer: torch.optim.Optimizer,
          settings: dict[str, Any], history: list[dict[str, Any]]) -> None:
    """Write weights + optimiser moments after epoch len(history); the JSON, written last,
    commits the checkpoint."""
    directory.mkdir(parents=True, exist_ok=True)
    tensors = {f"model.{k}": v for k, v in objective.state_dict().items()}
    for param_id, state in optimizer.state_dict()["state"].items():
        for key, value in state.items():
            tensors[f"optimizer.{param_id}.{key}"] = torch.as_tensor(value)
    name = f"epoch-{len(history):04d}.safetensors"
    tmp = directory / (name + ".tmp")
    save_file({k: v.detach().contiguous().cpu() for k, v in tensors.items()}, str(tmp))
    os.replace(tmp, directory / name)
    _write_atomic(directory / STATE_FILE, json.dumps(
        {"file": name, "settings": settings, "history": history}, indent=1))
    for old in directory.glob("epoch-*.safetensors"):
        if old.name != name:
            old.unlink(missing_ok=True)


def _resume(directory: Path, objective: nn.Module, optimizer: torch.optim.Optimizer,
            settings: dict[str, Any], device: torch.device) -> list[dict[str, Any]]:
    """Return the saved history after loading the saved state, or [] when there is none."""
    path = directory / STATE_FILE
    if not path.exists():
        return []
    saved = json.loads(path.read_text(encoding="utf-8"))
    if saved["settings"] != settings:
        raise DataError(f"{directory}: checkpoint written with {saved['settings']}, not "
                        f"{settings}: delete the directory to start over")
    tensors = load_file(str(directory / saved["file"]), device=str(device))
    objective.load_state_dict({k[len("model."):]: v for k, v in tensors.items()
                               if k.startswith("model.")})
    state: dict[int, dict[str, torch.Tensor]] = {}
    for name, value in tensors.items():
        if name.startswith("optimizer."):
            _, param_id, key = name.split(".", 2)
            # Adam keeps its step counter on the CPU.
            state.setdefault(int(param_id), {})[key] = value.cpu() if key == "step" else value
    optimizer.load_state_dict({"state": state,
                               "param_groups": optimizer.state_dict()["param_groups"]})
    return list(saved["history"])
