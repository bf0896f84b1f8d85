"""Interpolation paths between two sentences' vectors (Kerscher & Eger 2020, section 1: "one
can interpolate any two vectors x and y via z(alpha) = alpha x + (1 - alpha) y" and decode
z(alpha) for the sentences "between" them).

A path has k evenly spaced alphas from 1 (x) down to 0 (y), both ends included. Its summary:
how many distinct sentences the decoder produces along it, whether the two ends reproduce
their inputs, and the first alpha after 1 at which the output differs from the output at 1
(how far the decoder holds on to x).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from harness.analyses.probes.results import InterpolationPath, InterpolationSummary
from harness.analyses.probes.scoring import mean, rate, same


def alphas(steps: int) -> list[float]:
    """`steps` evenly spaced alphas from 1 to 0, both ends included (steps >= 2)."""
    if steps < 2:
        raise ValueError(f"an interpolation path needs at least 2 steps, got {steps}")
    return [round(float(a), 6) for a in np.linspace(1.0, 0.0, steps)]


def path_vectors(x: np.ndarray, y: np.ndarray, steps: int) -> np.ndarray:
    """The (steps, D) points alpha x + (1 - alpha) y, alpha from 1 to 0."""
    weights = np.asarray(alphas(steps))[:, None]
    return weights * x[None, :] + (1.0 - weights) * y[None, :]


def summarise_path(x: str, y: str, path_alphas: Sequence[float], outputs: Sequence[str]
                   ) -> InterpolationPath:
    """The summary of one decoded path from x to y."""
    if len(outputs) != len(path_alphas) or len(outputs) < 2:
        raise ValueError(f"{len(outputs)} outputs for {len(path_alphas)} alphas (at least 2)")
    distinct = len(dict.fromkeys(" ".join(o.split()) for o in outputs))
    first_change = next((alpha for alpha, output in zip(path_alphas[1:], outputs[1:])
                         if not same(output, outputs[0])), None)
    return InterpolationPath(x=x, y=y, alphas=list(path_alphas), outputs=list(outputs),
                             distinct=distinct, start_reproduced=same(outputs[0], x),
                             end_reproduced=same(outputs[-1], y), first_change=first_change)


def summarise_paths(paths: Sequence[InterpolationPath], steps: int) -> InterpolationSummary:
    """What a pair's paths show together."""
    changed = [p.first_change for p in paths if p.first_change is not None]
    ends = sum(p.start_reproduced for p in paths) + sum(p.end_reproduced for p in paths)
    return InterpolationSummary(
        steps=steps, paths=list(paths), mean_distinct=mean([float(p.distinct) for p in paths]),
        ends_reproduced=rate(ends, 2 * len(paths)), changed=len(changed),
        mean_first_change=mean(changed))


def interpolate_paths(pairs: Sequence[tuple[str, str]], steps: int,
                      encode: Callable[[list[str]], np.ndarray],
                      decode: Callable[[np.ndarray], list[str]]) -> InterpolationSummary:
    """Decode every path (all points of all paths in one batch) and summarise them."""
    sentences = list(dict.fromkeys(s for pair in pairs for s in pair))
    vectors = np.asarray(encode(sentences), dtype=np.float32) if sentences else None
    index = {sentence: row for row, sentence in enumerate(sentences)}
    points = [path_vectors(vectors[index[x]], vectors[index[y]], steps)  # type: ignore[index]
              for x, y in pairs]
    outputs = decode(np.concatenate(points).astype(np.float32)) if points else []
    path_alphas = alphas(steps)
    paths = [summarise_path(x, y, path_alphas, outputs[i * steps:(i + 1) * steps])
             for i, (x, y) in enumerate(pairs)]
    return summarise_paths(paths, steps)
