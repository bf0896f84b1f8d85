"""Checks of the spec's `breakdown:` section beyond its schema (`harness.analyses.lengths.spec`):
explicit bins must hold test sentences, found when the spec is read."""

from __future__ import annotations

from pathlib import Path

from harness.analyses.lengths.spec import breakdown_settings
from harness.spec.positions import Positions
from harness.spec.schema import Spec


def check_bins(spec: Spec, positions: Positions, spec_folder: Path) -> Spec:
    """The spec as it is; raise for a bin that starts at or beyond `corpus.max_tokens`, which
    no test sentence reaches."""
    edges = breakdown_settings(spec).length_bins
    if isinstance(edges, list) and edges[-1] >= spec.corpus.max_tokens:
        raise positions.error(f"a bin from {edges[-1]} tokens would be empty: the test set keeps "
                              f"sentences under corpus.max_tokens ({spec.corpus.max_tokens}) "
                              "tokens", ("breakdown", "length_bins"))
    return spec
