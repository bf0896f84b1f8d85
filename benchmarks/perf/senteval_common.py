"""What the SentEval benchmarks share: sbert's vectors of every sentence asked for, kept on disk
between calls (`CachedEncoder`)."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np


class CachedEncoder:
    """sbert's vectors of every sentence it has been asked for, kept in an `.npz` file."""

    def __init__(self, path: Path) -> None:
        from harness_plugins.encoders.sbert import SentenceBertEncoder

        self.path = path
        self.encoder = SentenceBertEncoder()
        self.vectors: dict[str, np.ndarray] = {}
        self.seconds = 0.0
        if path.exists():
            with np.load(path, allow_pickle=False) as stored:
                self.vectors = dict(zip(stored["sentences"].tolist(), stored["vectors"]))

    def __call__(self, sentences: list[str]) -> np.ndarray:
        missing = [s for s in dict.fromkeys(sentences) if s not in self.vectors]
        if missing:
            started = time.perf_counter()
            self.vectors.update(zip(missing, self.encoder.encode(missing)))
            self.seconds += time.perf_counter() - started
            self.save()
        return np.stack([self.vectors[s] for s in sentences])

    def save(self) -> None:
        """Write every vector so far (atomically)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.tmp.npz")
        sentences = list(self.vectors)
        np.savez(tmp, sentences=np.array(sentences, dtype=str),
                 vectors=np.stack([self.vectors[s] for s in sentences]))
        tmp.replace(self.path)
