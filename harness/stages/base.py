"""What every stage shares: the run context and helpers for cache keys."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, cast

from harness.protocols import BuildContext, EntryView
from harness.spec import Entry, Spec
from harness.util.cache import Cache, file_digest  # noqa: F401 - re-exported for the stages
from harness.util.vectors import Shard

log = logging.getLogger("harness.run")


@dataclass(frozen=True)
class ShardWork:
    """One split of one encoder's vector file being encoded in shards: what a process that
    encodes one of them needs to know besides the run's spec and cache."""

    encoder: str
    split: str
    path: Path  # the vector file in the artifact's partial directory, on the shared cache
    fingerprint: str  # the encoder's, which every shard's process must rebuild alike


class ShardRunner(Protocol):
    """Encodes the shards of a vector file in several processes (an executor's; the Ray
    executor's runs them as Ray tasks: `harness.executors.ray`)."""

    count: int  # shards per vector file

    def run(self, work: ShardWork, pending: Sequence[Shard],
            local: Callable[[Shard], None]) -> None:
        """Return once every shard of `pending` is written; `local(shard)` encodes one in
        this process."""
        ...


def _entry(component: EntryView) -> Entry:
    """`component` as the resolved spec's entry it must be: one that builds itself (an
    `Entry`, or a stand-in with its `build`, `info` and `identity`)."""
    if not callable(getattr(component, "build", None)):
        raise TypeError(f"expected an entry of the resolved spec, got {type(component).__name__}")
    return cast(Entry, component)


@dataclass
class RunContext:
    """Everything a stage needs: the resolved spec, the cache, the device, the timings."""

    spec: Spec
    cache: Cache
    device: str = "cpu"
    timings: dict[str, float] = field(default_factory=dict)
    # Built components reused across jobs (a metric's backbone loads once per run).
    built: dict[str, Any] = field(default_factory=dict)
    # Who encodes a vector file's shards besides this process (none: this process alone).
    shards: ShardRunner | None = None

    def build_context(self, **extra: Any) -> BuildContext:
        """Return the context handed to component factories."""
        return BuildContext(device=self.device, seed=self.spec.seed, **extra)

    def build(self, component: EntryView, purpose: str = "", **context: Any) -> Any:
        """A new instance of `component` (an entry of the resolved spec), built with the run's
        device and seed."""
        return _entry(component).build(self.build_context(**context), purpose)

    def build_once(self, component: EntryView, **context: Any) -> Any:
        """Return the component built with these options, building it on first use only."""
        component = _entry(component)
        key = json.dumps([component.info.kind, component.identity()], sort_keys=True,
                         default=str)
        if key not in self.built:
            self.built[key] = self.build(component, **context)
        return self.built[key]

    def add_time(self, stage: str, seconds: float) -> None:
        """Accumulate wall time per stage for provenance."""
        self.timings[stage] = round(self.timings.get(stage, 0.0) + seconds, 3)
