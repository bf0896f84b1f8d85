"""What every stage shares: the run context and helpers for cache keys."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any

from harness.cache import Cache, file_digest  # noqa: F401 - re-exported for the stages
from harness.protocols import BuildContext
from harness.spec import Component, Spec

log = logging.getLogger("harness.run")


@dataclass
class RunContext:
    """Everything a stage needs: the resolved spec, the cache, the device, the timings."""

    spec: Spec
    cache: Cache
    device: str = "cpu"
    timings: dict[str, float] = field(default_factory=dict)
    # Built components reused across jobs (a metric's backbone loads once per run).
    built: dict[str, Any] = field(default_factory=dict)

    def build_context(self, **extra: Any) -> BuildContext:
        """Return the context handed to component factories."""
        return BuildContext(device=self.device, seed=self.spec.seed, **extra)

    def build(self, component: Component, purpose: str = "", **context: Any) -> Any:
        """A new instance of `component`, built with the run's device and seed."""
        return component.build(self.build_context(**context), purpose)

    def build_once(self, component: Component, **context: Any) -> Any:
        """Return the component built with these options, building it on first use only."""
        key = json.dumps([component.info.kind, component.identity()], sort_keys=True,
                         default=str)
        if key not in self.built:
            self.built[key] = self.build(component, **context)
        return self.built[key]

    def add_time(self, stage: str, seconds: float) -> None:
        """Accumulate wall time per stage for provenance."""
        self.timings[stage] = round(self.timings.get(stage, 0.0) + seconds, 3)
