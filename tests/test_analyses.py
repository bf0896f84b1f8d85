"""Every registered analysis, imported through the registry as a run imports it, passes the
conformance kit on a tiny real run; the first-party ones fill the results fields the runner
used to fill itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.loader import load_registry
from harness.protocols import Analysis, BuildContext
from harness.testing import check_analysis

pytestmark = pytest.mark.usefixtures("one_thread")

FILLS = {
    "rankings": {"rankings"},
    "floor": {"floor"},
    "lengths": {"lengths"},
    "downstream": {"downstream", "downstream_source", "downstream_origin",
                   "downstream_details", "downstream_missing"},
    "correlation": {"correlations"},
    "probes": {"probes"},
}


def test_every_registered_analysis_conforms(tmp_path: Path) -> None:
    registry = load_registry()
    infos = registry.in_order("analysis")
    assert [info.name for info in infos][:6] == list(FILLS)
    fields: dict[str, object] = {}
    for info in infos:
        analysis = registry.create("analysis", info.name, info.options(), BuildContext())
        assert isinstance(analysis, Analysis)
        # one workdir: the tiny run's artifacts are built once and reused by every check
        filled = check_analysis(analysis, tmp_path, options=info.options(),
                                fields={key: fields[key] for key in fields
                                        if any(key in FILLS[need] for need in info.needs)})
        if info.name in FILLS:
            assert set(filled) <= FILLS[info.name]
        fields.update(filled)
    # the tiny run has two encoders, a decoder each: avg, and the floor (a control, so one
    # encoder is under study and nothing is ranked)
    assert fields["rankings"] is None
    assert fields["floor"].encoder == "random-gaussian"  # type: ignore[union-attr]
    assert fields["lengths"].bins  # type: ignore[union-attr]
    assert fields["downstream"] == {}
    assert "too few encoders" in " ".join(fields["correlations"].notes)  # type: ignore[union-attr]
    assert fields.get("probes") is None  # the spec asks for no probe
