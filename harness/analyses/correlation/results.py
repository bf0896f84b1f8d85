"""The correlation analysis's records in results.json (`correlations`): the primary analysis
declared in the spec, the diagnostics x downstream tasks matrix across encoders, its summary,
ranks and notes."""

from __future__ import annotations

from pydantic import Field

from harness.protocols import ResultsView
from harness.report.elements import spec_setting
from harness.results.records import Record, is_none


class CorrelationCell(Record):
    """rho and p of one diagnostic x task over `n` encoders; None where undefined.
    `p_method` is "exact" (all n! permutations) or "scipy", absent when undefined; `p_holm`
    the p-value adjusted by Holm's procedure over every cell of the matrix; `ci95` the
    interval across encoders (`Correlations.interval`)."""

    rho: float | None
    p: float | None = None
    p_method: str | None = Field(None, exclude_if=is_none)
    p_holm: float | None = Field(None, exclude_if=is_none)
    n: int = 0
    ci95: tuple[float | None, float | None] | None = Field(None, exclude_if=is_none)


class CorrelationSummary(Record):
    """A diagnostic's mean and minimum rho over the tasks where it is defined."""

    mean: float | None = None
    min: float | None = None
    tasks: int | None = Field(None, exclude_if=is_none)
    mean_ci95: tuple[float | None, float | None] | None = Field(None, exclude_if=is_none)


class PrimaryTest(Record):
    """One test of the primary analysis: a diagnostic's mean correlation over the tasks.

    `diagnostic` names it ("id = perm" when diagnostics identical on every encoder were merged
    into one test), `diagnostics` lists the metrics it stands for; `mean_rho` is the mean over
    the tasks of the correlation across the encoders, `p` its two-sided joint permutation
    p-value, `p_holm` that p adjusted by Holm's procedure over the family of tests, and
    `significant` whether `p_holm` <= the analysis's `alpha`."""

    diagnostic: str
    diagnostics: list[str] = []
    mean_rho: float | None = None
    p: float | None = None
    p_holm: float | None = None
    significant: bool = False


class Registration(Record):
    """The registration of a spec's primary test: `commit` (and its `date`) at which the spec
    file's `correlation.primary` was last changed, `file` (relative to the checkout), `equal`
    (the run's spec is the spec as committed there) and `changed` (the dotted fields in which
    it is not); `commit` None with `why` when the spec is not registered."""

    file: str = ""
    commit: str | None = None
    date: str | None = Field(None, exclude_if=is_none)
    equal: bool = False
    changed: list[str] = []
    why: str | None = Field(None, exclude_if=is_none)


class PrimaryAnalysis(Record):
    """The analysis the spec declared before the run (`correlation.primary`): the claim.

    `tests` holds one `PrimaryTest` per diagnostic (identical ones merged), over the same
    `encoders` (n of them) and the same `tasks` (those every encoder has; `tasks_left_out`
    those declared or present that some encoder lacks). `p_method` is "exact" (all n!
    permutations of the encoders) or "monte-carlo" ((b+1)/(m+1) over `permutations` random
    ones); `correction` ("holm") is over the `family` tests at family-wise error `alpha`.
    `min_detectable_rho` is the smallest population correlation the test detects with
    probability `power` at level `power_alpha` (alpha / family: Holm's first step, the
    conservative statement) under `power_model`; None when none is. `notes` say what was left
    out and why."""

    statistic: str = "mean-rho"
    tests: list[PrimaryTest] = []
    encoders: list[str] = []
    n: int = 0
    tasks: list[str] = []
    tasks_left_out: list[str] = []
    p_method: str | None = Field(None, exclude_if=is_none)
    permutations: int = 0
    alpha: float = 0.05
    correction: str = "holm"
    family: int = 0
    power: float = 0.8
    power_alpha: float | None = Field(None, exclude_if=is_none)
    power_model: str = ""
    min_detectable_rho: float | None = None
    notes: list[str] = []



class FamilyAnalysis(Record):
    """The primary test's encoders in their declared families (`family:`): `families` (family
    -> its encoders among them; an encoder of no family is left out of the map), the one-way
    intraclass correlation of each tested diagnostic's ranks over the families (`icc`) and the
    effective number of independent encoders it implies (`effective_n`, Kish's N / Deff,
    `harness.stats.clusters`) beside `n`; and `within`, the primary analysis over the encoders
    of each family of at least `MIN_FAMILY` alone, with its own exact permutation tests
    (exploratory: the registered test is across all of them)."""

    families: dict[str, list[str]] = {}
    n: int = 0
    icc: dict[str, float] = {}
    effective_n: dict[str, float] = {}
    within: dict[str, PrimaryAnalysis] = {}

class Correlations(Record):
    """Diagnostics x downstream tasks across encoders (Kerscher & Eger 2020, Figure 2 and
    Table 1): the matrix, its summary, the rank tables and notes on what was missing.

    `diagnostics` holds the values correlated (diagnostic -> encoder -> value), `decoder` the
    decoder whose runs they are ("" for published tables), `sources` where they came from.
    `interval` names how the cells' and means' intervals were got ("fisher-z": across
    encoders), `correction` the multiple-comparison correction of `p_holm` over the matrix,
    and `controls` the control encoders kept out of the correlations and ranks. `primary` is
    the analysis declared in the spec (`PrimaryAnalysis`), whose result is the claim; the
    matrix is exploratory.
    """

    method: str = "spearman"
    decoder: str = ""
    matrix: dict[str, dict[str, CorrelationCell]] = {}
    summary: dict[str, CorrelationSummary] = {}
    ranks: dict[str, dict[str, int]] = {}
    rank_by: str = ""
    notes: list[str] = []
    diagnostics: dict[str, dict[str, float | None]] = {}
    sources: dict[str, str] = {}
    interval: str | None = Field(None, exclude_if=is_none)
    correction: str | None = Field(None, exclude_if=is_none)
    controls: list[str] = []
    primary: PrimaryAnalysis | None = Field(None, exclude_if=is_none)
    # A run that joined a reference bundle: the primary analysis over the bundle's encoders
    # alone, the ones a test registered for the bundle was registered for; `primary` is then
    # over every encoder of the run (n + 1 for one new encoder), exploratory.
    primary_reference: PrimaryAnalysis | None = Field(None, exclude_if=is_none)
    # Whether `primary` was registered before the run (`registration.registration`).
    registration: Registration | None = Field(None, exclude_if=is_none)
    # The primary test's encoders by family, when the spec declares families.
    families: FamilyAnalysis | None = Field(None, exclude_if=is_none)

    def defined(self) -> bool:
        """True when at least one correlation is defined."""
        return any(cell.rho is not None for row in self.matrix.values() for cell in row.values())


def correlations_of(results: ResultsView) -> Correlations:
    """The run's correlations (results.json `correlations`), or an empty record for a run the
    correlation analysis did not run in."""
    return results.filled("correlations", Correlations) or Correlations()


def ranked_by(results: ResultsView) -> str:
    """The diagnostic the encoders are ranked by (`correlation.rank_by`), as the run recorded
    it."""
    return correlations_of(results).rank_by or str(spec_setting(results, "correlation",
                                                               "rank_by", ""))
