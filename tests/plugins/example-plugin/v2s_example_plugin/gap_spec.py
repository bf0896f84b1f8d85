"""The length-gap analysis's spec section, `length_gap:`, and the parts that check it
(`AnalysisParts`): `resolve` on every load, `check` once the spec's components are known,
`preflight` just before a run.

    length_gap:
      digits: 1             # decimals the report and `harness length-gap` show
      threshold: 0.5        # |mean gap| in tokens from which the summary names a pair
      decoder: mos-lstm     # measure this decoder's outputs only (default: every decoder's)
      baseline: runs/old    # an earlier run whose gaps the report shows beside this run's
      retrain: 500          # also train each decoder on the first 500 training sentences

The harness validates the section with `LengthGapSection` when it reads the spec (a bad value
is an error naming file:line); the analysis and its parts read it typed, as
`spec.section(SECTION, LengthGapSection)`.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from harness.plugin import DataError, PositionsView, Settings, SpecView

from .gap_results import read_gaps

SECTION = "length_gap"
"""The spec's top-level key the analysis reads."""

class LengthGapSection(Settings):
    """The spec's `length_gap:` section; every setting has a default, so it may be left out."""

    digits: int = Field(2, ge=0, le=6, description="decimals shown in the report's table")
    threshold: float = Field(1.0, gt=0, description="a pair whose outputs are this many "
                                                    "whitespace tokens longer or shorter than "
                                                    "their inputs on average is named in the "
                                                    "report's summary")
    decoder: str | None = Field(None, description="measure this decoder's outputs only "
                                                  "(default: every decoder's)")
    baseline: Path | None = Field(None, description="an earlier run directory whose length "
                                                    "gaps the report shows beside this run's")
    retrain: int | None = Field(None, gt=0, description="train each measured decoder again on "
                                                        "the first this many training sentences "
                                                        "(in each encoder's job) and give its "
                                                        "outputs' gap beside the pair's")


def resolve_baseline(spec: SpecView, positions: PositionsView, folder: Path) -> SpecView:
    """`resolve`, run on every load: the spec with `length_gap.baseline` made absolute. Whether
    the run is there is preflight's question (`baseline_problems`): it may be made later."""
    section = spec.section(SECTION, LengthGapSection)
    if section.baseline is None or section.baseline.is_absolute():
        return spec
    baseline = positions.base((SECTION, "baseline"), folder) / section.baseline
    return spec.with_section(SECTION, section.model_copy(update={"baseline": baseline}))


def check_decoder(spec: SpecView, positions: PositionsView) -> None:
    """`check`, run once the spec's components are resolved, when the spec runs the analysis:
    raise for a `length_gap.decoder` that is not one of the spec's decoders."""
    decoder = spec.section(SECTION, LengthGapSection).decoder
    decoders = [entry.name for entry in spec.decoders]
    if decoder is not None and decoder not in decoders:
        raise positions.error(f"{decoder!r} is not among the spec's decoders "
                              f"({', '.join(decoders) or 'none'}): name one of them, or remove "
                              "`decoder` to measure every decoder", (SECTION, "decoder"))


def baseline_problems(spec: SpecView) -> list[Exception]:
    """`preflight`, run just before a run (and by `harness validate`): the baseline run, when
    the section names one, that is not there or holds no length gaps, one line each."""
    baseline = spec.section(SECTION, LengthGapSection).baseline
    if baseline is None:
        return []
    try:
        read_gaps(baseline)
    except DataError as exc:
        return [spec.positions.error(f"{exc}; run the baseline's spec first, or remove "
                                     "`baseline`", (SECTION, "baseline"))]
    return []
