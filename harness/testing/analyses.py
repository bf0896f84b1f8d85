"""`check_analysis`: what the runner and the report rely on from an analysis, checked on a
tiny real run."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from harness.testing.failures import fail, name_of
from harness.testing.runs import tiny_execution, tiny_spec

PNG = b"\x89PNG\r\n\x1a\n"


def check_analysis(analysis: Any, workdir: Path, *, name: str | None = None,
                   options: Any = None, fields: dict[str, Any] | None = None) -> dict[str, Any]:
    """Check `analysis` as the runner and the report use it, on a tiny run of the first-party
    components (`harness.testing.runs.TINY_SPEC`) in `workdir`, and return the results
    fields it filled:

    - it implements `harness.protocols.Analysis` (`run`, `sections`, `figures`);
    - `run(run)` returns a mapping from field names to values results.json can hold, the same
      on a second call (analyses are deterministic given the run's seed);
    - from the results alone, saved and read back as `harness report` reads them, `figures`
      returns PNG bytes by file name and `sections` a list of report sections (each with a
      `title`), the same as before saving;
    - fields of its own (kept under results.json `analyses: {name: ...}`) are filed under the
      name it registers under, and its sections show them: an analysis that reads them back
      under another name would fill results.json and never draw its section.

    `name` is the name it registers under, which keeps its own fields in results.json
    (`analyses: {name: ...}`; default: its `name` attribute; an analysis with fields of its own
    needs one or the other); `options` are its validated options (default: none); `fields`
    stand for the results fields of the analyses it `needs` (e.g. the downstream analysis's
    for one that reads downstream scores), which it may read but not replace.
    """
    from harness.analyses.run import AnalysisRun, results_fields
    from harness.executors.local import LocalExecutor
    from harness.protocols import Analysis, Options
    from harness.report.elements import Section
    from harness.results.model import RunResults, load_results

    shown = name_of(analysis)
    name = name or str(getattr(analysis, "name", "") or "")
    if not isinstance(analysis, Analysis):
        raise fail(f"{shown} does not implement harness.protocols.Analysis",
                   "give it run(run) -> mapping of results fields, sections(results, figures) "
                   "-> list of Section and figures(results) -> dict of PNG bytes")
    spec = tiny_spec(workdir)
    ctx, corpus, vocab, execution = tiny_execution(spec, LocalExecutor(), workdir / "cache")
    execution = _with_jobs(analysis, name or shown, ctx, corpus, vocab, execution,
                           options or Options())
    reading = replace(ctx, cache=ctx.cache.read_only())  # as the runner hands it: no builds
    found = []
    for attempt in (1, 2):
        run = AnalysisRun(ctx=reading, corpus=corpus, vocab=vocab, execution=execution,
                          out=workdir / f"run-{attempt}", options=options or Options(),
                          fields=dict(fields or {}), analysis=name or shown)
        run.out.mkdir(parents=True, exist_ok=True)
        try:
            filled = results_fields(name or shown, analysis.run(run), plugin=shown)
        except Exception as exc:
            raise fail(f"{shown}.run failed on the tiny run: {type(exc).__name__}: {exc}",
                       "return a mapping of results fields whose values are JSON data or "
                       "pydantic models") from exc
        _check_own_fields(shown, name, filled, fields or {})
        found.append(json.dumps(RunResults(**(fields or {}), **filled).to_json(),
                                sort_keys=True))
    if found[0] != found[1]:
        raise fail(f"{shown}.run gave different results on a second call",
                   "seed every random choice from run.spec.seed")
    results = RunResults(spec=spec.model_dump(mode="json"), **(fields or {}), **filled)
    results.save(workdir)
    again = load_results(workdir)
    drawn = []
    for label, read in (("the run's results", results), ("results.json read back", again)):
        figures = analysis.figures(read)
        if not isinstance(figures, dict) or not all(
                isinstance(k, str) and isinstance(v, bytes) and v.startswith(PNG)
                for k, v in figures.items()):
            raise fail(f"{shown}.figures({label}) returned {type(figures).__name__} that is "
                       "not file name -> PNG bytes",
                       "return {'name.png': png_bytes} for each figure with something to show")
        sections = analysis.sections(read, figures)
        if not isinstance(sections, list) or not all(isinstance(s, Section) for s in sections):
            raise fail(f"{shown}.sections({label}) did not return a list of Section",
                       "return harness.report.elements.Section objects (none: [])")
        drawn.append([(s.title, s.text, [tuple(t) for t in s.tables]) for s in sections])
    if drawn[0] != drawn[1]:
        raise fail(f"{shown}.sections differ once results.json is read back",
                   "build sections from the results fields alone (they round-trip as JSON)")
    _check_shown(shown, name, filled, drawn[1])
    return filled


def _check_shown(shown: str, name: str, filled: dict[str, Any], drawn: list[Any]) -> None:
    """Fail when the analysis filled fields of its own but drew no section from them."""
    own = (filled.get("analyses") or {}).get(name) or {}
    if not drawn and any(value not in (None, {}, [], "") for value in own.values()):
        raise fail(f"{shown} filled analyses.{name} ({', '.join(own)}) but sections() drew "
                   "nothing from it, so the report never shows it",
                   f"read the fields back from results.analyses[{name!r}], the name it "
                   "registers under (register(NAME, ...)), and return no field of its own where "
                   "there is nothing to show")


def _check_own_fields(shown: str, name: str, filled: dict[str, Any],
                      needed: dict[str, Any]) -> None:
    """Fail for fields of its own filed under no registered name (the name unknown here), and
    for results fields it replaces that the analyses it needs filled."""
    own = (filled.get("analyses") or {}).get(name or shown)
    if own and not name:
        raise fail(f"{shown}.run filled fields of its own ({', '.join(own)}), which "
                   "results.json files under the name the analysis registers under, and "
                   "check_analysis does not know it",
                   "pass it: check_analysis(analysis, workdir, name='your-analysis'), the name "
                   "given to register(...), or give the analysis a `name` attribute; its "
                   "sections() read the fields back from results.analyses[that name]")
    replaced = sorted((filled.keys() - {"analyses"}) & needed.keys())
    if replaced:
        raise fail(f"{shown}.run returned {', '.join(replaced)}, which the analyses it needs "
                   "filled (`fields`)",
                   "read them from run.fields and return fields of its own; the runner refuses "
                   "an analysis that replaces another's results")


def _with_jobs(analysis: object, name: str, ctx: Any, corpus: Any, vocab: Any,
               execution: Any, options: Any) -> Any:
    """`execution` with the records of `analysis`'s jobs on the tiny run, when it plans any
    (`PlannedAnalysis`): each job carried out as an executor carries it out, its record
    carried in its encoder's outcome, so that `run` reads them as in a real run."""
    from harness.executors import Execution
    from harness.executors.plan import carry_out, recorded, with_records
    from harness.protocols import JobInputs, PlannedAnalysis

    if not isinstance(analysis, PlannedAnalysis):
        return execution
    ran = [recorded(job, carry_out(analysis, job, JobInputs(ctx, corpus, vocab, options), name))
           for job in analysis.jobs(ctx.spec)]
    return Execution(outcomes=with_records(execution.outcomes, ran),
                     failures=execution.failures)
