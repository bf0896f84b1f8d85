"""`check_attack`: what the core relies on from an attack (`harness.protocols.Attack`)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from harness.testing.failures import DEFAULT_SENTENCES, fail, name_of


def bag_embedding(sentences: Sequence[str], dim: int = 64) -> np.ndarray:
    """A deterministic stand-in for an encoder: each word hashed to one of `dim` coordinates,
    counted, rows scaled to unit length (float32): similar sentences get similar vectors."""
    import zlib

    rows = np.zeros((len(sentences), dim), dtype=np.float32)
    for i, sentence in enumerate(sentences):
        for word in sentence.split():
            rows[i, zlib.crc32(word.encode("utf-8")) % dim] += 1.0
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms > 0, norms, 1.0)


def check_attack(attack: Any, sentences: Sequence[str] | None = None) -> list[str]:
    """Return what the attack read back from the test vectors, after checking it as the core
    runs it:

    - it implements `harness.protocols.Attack` with a `ThreatModel` as `threat`;
    - `fit` takes the inputs its threat model grants, built from `sentences` (default: the
      kit's sentences; the first half leaked, the second half attacked) and a hashed
      bag-of-words embedding (`bag_embedding`) standing in for the encoder, queries, decoder
      and surrogate included where it asks for them;
    - it uses only what its threat model grants (an ungranted input is None) and leaves the
      vectors it is handed unchanged (they are read-only, as the store's memory maps are);
    - `invert` returns a `harness.protocols.Inversion` with one string (or one list of
      strings) per attacked vector, and as many finite scores when it gives scores;
    - it is reproducible: fitting again with the same seed reads the same texts back;
    - an attack that ranks (`harness.protocols.Ranker`) answers `likelihood` for every vector
      with one finite score per candidate (`ranking_problem`), as the core asks it for the
      canaries: each attacked vector with its own text and two others as candidates.
    """
    from harness.protocols import Attack, Ranker, ranking_problem, threat_model

    name = name_of(attack)
    if not isinstance(attack, Attack):
        raise fail(f"{name} does not implement harness.protocols.Attack",
                   "give it `threat` (a ThreatModel), fit(inputs) and invert(vectors)")
    try:
        threat = threat_model(attack)
    except TypeError as exc:
        raise fail(f"{name}: {exc}", "set `threat = ThreatModel(...)`: what it is given") from None
    texts = list(sentences or DEFAULT_SENTENCES)
    half = max(1, len(texts) // 2)
    leaked, attacked = texts[:half], texts[half:] or texts[:1]
    found = []
    for _ in range(2):
        with tempfile.TemporaryDirectory() as workdir:
            with _as_the_core_runs(name, "fit", threat):
                attack.fit(_inputs(threat, leaked, Path(workdir)))
            with _as_the_core_runs(name, "invert", threat):
                inversion = attack.invert(_read_only(bag_embedding(attacked)))
            if isinstance(attack, Ranker):
                candidates = [[text, *[t for t in texts if t != text][:2]] for text in attacked]
                with _as_the_core_runs(name, "likelihood", threat):
                    scores = attack.likelihood(_read_only(bag_embedding(attacked)), candidates)
                problem = ranking_problem(scores, candidates)
                if problem is not None:
                    raise fail(f"{name}: {problem}", "return one list per vector, one finite "
                               "number per candidate, higher the likelier")
        found.append(_texts(name, inversion, len(attacked)))
    if found[0] != found[1]:
        raise fail(f"{name} is not reproducible: fitted twice with the same seed, it read "
                   "other texts back", "seed every random choice from `inputs.seed`")
    return found[0]


def _inputs(threat: Any, leaked: list[str], workdir: Path) -> Any:
    """The inputs the core would hand an attack with `threat`, on the kit's stand-ins."""
    from harness.protocols import AttackInputs

    count = len(leaked) if threat.leaked is None else min(threat.leaked, len(leaked))
    texts = leaked[:count]

    def decode(vectors: np.ndarray, k: int) -> list[list[str]]:
        """The leaked sentences nearest by cosine, best first: a decoder stand-in."""
        cosines = np.asarray(vectors) @ bag_embedding(leaked).T
        return [[leaked[j] for j in np.argsort(-row, kind="stable")[:k]] for row in cosines]

    return AttackInputs(texts=texts, vectors=_read_only(bag_embedding(texts)), seed=1,
                        workdir=workdir,
                        query=(lambda batch: bag_embedding(list(batch))) if threat.queries
                        else None,
                        public=list(leaked) if threat.public else None,
                        decode=decode if threat.decoder else None,
                        surrogate_vectors=bag_embedding(texts, 48) if threat.surrogate else None,
                        surrogate_decode=(lambda vectors, k: [[leaked[0]]] * len(vectors))
                        if threat.surrogate else None)


def _read_only(vectors: np.ndarray) -> np.ndarray:
    vectors.setflags(write=False)
    return vectors


@contextmanager
def _as_the_core_runs(name: str, method: str, threat: Any) -> Iterator[None]:
    """Fail, with what to do, where the core would refuse: an ungranted input used, the
    read-only vectors written."""
    from harness.protocols import ungranted_use

    try:
        yield
    except (TypeError, AttributeError) as exc:
        hint = ungranted_use(exc, threat)
        if hint is None:
            raise
        raise fail(f"{name}.{method}: {type(exc).__name__}: {exc}", hint) from exc
    except ValueError as exc:
        if "read-only" not in str(exc):
            raise
        raise fail(f"{name}.{method} writes into the vectors it is handed ({exc})",
                   "copy them first (np.array(vectors)): the store's vectors are read-only "
                   "memory maps") from exc


def _texts(name: str, inversion: Any, count: int) -> list[str]:
    """One text per attacked vector, checked (`harness.protocols.inversion_problem`)."""
    from harness.protocols import inversion_problem, inversion_texts

    problem = inversion_problem(inversion, count)
    if problem is not None:
        raise fail(f"{name}.{problem}", "return a harness.protocols.Inversion with one entry "
                   "per attacked vector, in order, in every field it fills (and in every step)")
    return inversion_texts(inversion)
