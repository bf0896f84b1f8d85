"""The `comparison:` section: the settings every comparison of encoders reads, once under
`correlation:`. An older spec that gives them there runs with a deprecation warning at its
line; one that gives a key in both places is refused; an older results.json reads the same."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from harness.errors import SpecError
from harness.report.elements import min_support, spec_setting
from harness.results.model import RunResults
from harness.spec import load_spec
from tests.test_spec import MINIMAL, line_of, write


def test_comparison_settings_are_read_from_their_section(tmp_path: Path) -> None:
    text = MINIMAL + "comparison: {resamples: 200, controls: include, min_support: 12}\n"
    spec = load_spec(write(tmp_path, text))
    assert (spec.comparison.resamples, spec.comparison.controls,
            spec.comparison.min_support, spec.comparison.permutations) == (200, "include", 12,
                                                                          9999)
    assert "resamples" not in type(spec.correlation).model_fields


def test_an_older_spec_runs_with_a_warning_at_each_moved_keys_line(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    text = MINIMAL + "correlation:\n  rank_by: id\n  resamples: 200\n  controls: include\n"
    path = write(tmp_path, text)
    with caplog.at_level(logging.WARNING, logger="harness.spec"):
        spec = load_spec(path)
    assert (spec.comparison.resamples, spec.comparison.controls) == (200, "include")
    assert spec.correlation.rank_by == "id"
    assert [record.getMessage() for record in caplog.records] == [
        f"{path}:{line_of(text, 'resamples')}: correlation.resamples is deprecated: write it "
        "under `comparison:` (read as comparison.resamples)",
        f"{path}:{line_of(text, 'controls')}: correlation.controls is deprecated: write it "
        "under `comparison:` (read as comparison.controls)"]


def test_a_key_in_both_sections_is_refused_at_its_line(tmp_path: Path) -> None:
    text = MINIMAL + "correlation: {resamples: 200}\ncomparison: {resamples: 300}\n"
    path = write(tmp_path, text)
    with pytest.raises(SpecError) as caught:
        load_spec(path)
    assert str(caught.value) == (
        f"{path}:{line_of(text, 'correlation:')}: correlation.resamples and "
        "comparison.resamples are both given: keep comparison.resamples and remove "
        "correlation.resamples")


def test_an_older_results_json_reads_its_comparison_settings_under_correlation() -> None:
    older = RunResults.model_validate({"spec": {"name": "old", "correlation": {
        "method": "spearman", "min_support": 12, "resamples": 200}}})
    assert min_support(older) == 12
    assert spec_setting(older, "comparison", "resamples", None) == 200
    assert spec_setting(older, "comparison", "permutations", None) is None  # not recorded
    assert older.spec.correlation is not None and older.spec.correlation.method == "spearman"
    newer = RunResults.model_validate({"spec": {"name": "new", "comparison": {
        "min_support": 7}}})
    assert min_support(newer) == 7 and min_support(RunResults()) == 30
