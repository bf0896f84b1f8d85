"""`harness data senteval --dir DIR`: download and prepare SentEval's downstream data.

Replicates SentEval's `data/downstream/get_transfer_data.bash` (URLs as there) in Python (the
standard library, and sacremoses for Moses' tokenizer), one group of the script at a time
(`prepare`: downloads, unzips/untars, renames, and the same text
preprocessing). SNLI and COCO, which the script also
fetches, are not tasks of this harness and are skipped.

What the script lacks, and users lose hours to: every prepared file is checked to be non-empty
and to have its expected number of lines (`layout`); downloads are
retried and resume (`harness.plugin.fetch`: `<key>-NAME.part` keyed by the URL, continued with
Range and If-Range while the server's file is unchanged, restarted otherwise); a group whose
files already check out is skipped, so a rerun finishes what a broken or interrupted run left.
Downloads live in `DIR/.downloads/<source>/` until their group is prepared and verified.

Which tasks a group serves is the task table's (each task's `download`); the groups here say
how their files are made, and `_check_groups` keeps the two in step.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path

from harness.plugin import DataError, HarnessError

from .layout import LAYOUT, LINES, TASKS, TOTALS, count_lines
from .prepare import (
    SOURCES,
    STS_ARCHIVES,
    Workspace,
    prepare_binary,
    prepare_mrpc,
    prepare_sick,
    prepare_sst,
    prepare_sts,
    prepare_stsb,
    prepare_trec,
)


@dataclass(frozen=True)
class Group:
    """One unit of get_transfer_data.bash: the sources it downloads and how it prepares them."""

    name: str
    sources: tuple[str, ...]
    prepare: Callable[[Workspace], None]

    @property
    def tasks(self) -> tuple[str, ...]:
        """Return the tasks whose files this group prepares (the table's `download`), in order."""
        return tuple(name for name, task in TASKS.items() if task.download == self.name)

    def files(self) -> list[str]:
        """Return the files (relative to data/downstream) this group leaves."""
        directories = {"/".join(LAYOUT[task]) + "/" for task in self.tasks}
        binary = [f for task in self.tasks if task in TOTALS for f in TOTALS[task][0]]
        return binary + [f for f in LINES if any(f.startswith(d) for d in directories)]


GROUPS: tuple[Group, ...] = (
    Group("SST", ("SSTbin", "SSTfine"), prepare_sst),
    *(Group(year, (year,), partial(prepare_sts, year=year)) for year in STS_ARCHIVES),
    Group("STSB", ("STSBenchmark",), prepare_stsb),
    Group("TREC", ("TREC",), prepare_trec),
    Group("SICK", ("SICK",), prepare_sick),
    Group("BINARY", ("BINCLASSIF",), prepare_binary),
    Group("MRPC", ("MRPC",), prepare_mrpc),
)


def _check_groups() -> None:
    """Raise unless every task of the table is prepared by exactly one group here."""
    names = [group.name for group in GROUPS]
    unserved = sorted({task.download for task in TASKS.values()} - set(names))
    if unserved or len(set(names)) != len(names) or not all(group.tasks for group in GROUPS):
        raise RuntimeError(f"SentEval download groups {names} do not match the task table "
                           f"(no group for {unserved})")


_check_groups()


# --- Verifying and reporting ------------------------------------------------------------------


@dataclass(frozen=True)
class FileCheck:
    """One prepared file: its line count against the expected one, and what is wrong if any."""

    path: Path
    lines: int | None
    expected: int | None
    problem: str | None = None


@dataclass(frozen=True)
class GroupReport:
    """What happened to one group: `present` (already fine), `downloaded`, or `failed`."""

    name: str
    tasks: tuple[str, ...]
    status: str
    files: tuple[FileCheck, ...] = ()
    error: str | None = None

    @property
    def ok(self) -> bool:
        """Return True when every file of the group checks out."""
        return self.status != "failed"

    def problems(self) -> list[str]:
        """Return one line per problem: the error, then each failing file."""
        lines = [self.error] if self.error else []
        return lines + [f"{check.path}: {check.problem}" for check in self.files if check.problem]


@dataclass(frozen=True)
class Report:
    """The outcome of `download_senteval`, per group of files."""

    directory: Path
    groups: tuple[GroupReport, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        """Return True when every requested group is present and verified."""
        return all(group.ok for group in self.groups)

    def problems(self) -> list[str]:
        """Return one line per problem over all groups."""
        return [line for group in self.groups for line in group.problems()]

    def summary(self) -> str:
        """Return a short table: group, tasks, status, files checked."""
        rows = [f"SentEval data in {self.directory}"]
        for group in self.groups:
            checked = sum(1 for c in group.files if c.problem is None)
            rows.append(f"  {group.name:<6} {','.join(group.tasks):<22} {group.status:<10} "
                        f"{checked}/{len(group.files)} files ok")
        rows += [f"  problem: {line}" for line in self.problems()]
        return "\n".join(rows)


def verify(root: Path, group: Group) -> tuple[FileCheck, ...]:
    """Return the checks of `group`'s files under `root`: present, non-empty, expected lines."""
    checks: list[FileCheck] = []
    counts: dict[str, int] = {}
    for name in group.files():
        path = root / name
        expected = LINES.get(name)
        if not path.is_file():
            checks.append(FileCheck(path, None, expected, "missing"))
            continue
        data = path.read_bytes()
        counts[name] = lines = count_lines(data)
        if not data.strip():
            checks.append(FileCheck(path, lines, expected, "empty (a broken download?)"))
        elif expected is not None and lines != expected:
            checks.append(FileCheck(path, lines, expected,
                                    f"{lines} lines, expected {expected}"))
        else:
            checks.append(FileCheck(path, lines, expected))
    for task in group.tasks:
        if task in TOTALS and all(name in counts for name in TOTALS[task][0]):
            files, expected_total = TOTALS[task]
            total = sum(counts[name] for name in files)
            if total != expected_total:
                problem = (f"{task} has {total} lines over {' + '.join(files)}, expected "
                           f"{expected_total}")
                checks = [replace(c, problem=problem) if c.path == root / files[0] else c
                          for c in checks]
    return tuple(checks)


def _groups_for(tasks: Iterable[str] | None) -> list[Group]:
    if tasks is None:
        return list(GROUPS)
    wanted = {task.upper() for task in tasks}
    known = {task for group in GROUPS for task in group.tasks}
    unknown = sorted(wanted - known)
    if unknown:
        raise HarnessError(f"unknown SentEval task(s) {', '.join(unknown)}; known: "
                           f"{', '.join(sorted(known))}")
    return [group for group in GROUPS if wanted & set(group.tasks)]


def download_senteval(directory: Path, *, tasks: Iterable[str] | None = None,
                      base_urls: Mapping[str, str] | None = None,
                      progress: bool = True) -> Report:
    """Download and prepare SentEval's data/downstream into `directory`; return the report.

    `tasks` limits the work to the groups serving those tasks (MR, SST2, SICK-R, ...; default
    all). `base_urls` replaces source base URLs (keys of `SOURCES`: mirrors, or a local server
    in tests). Groups whose files already verify are skipped; a failing group does not stop the
    others. Nothing is raised for download problems: they are in `Report.problems()`.
    """
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    workspace = Workspace(root=root, downloads=root / ".downloads",
                          base_urls={**SOURCES, **(base_urls or {})}, progress=progress)
    reports = []
    for group in _groups_for(tasks):
        checks = verify(root, group)
        if all(check.problem is None for check in checks):
            reports.append(GroupReport(group.name, group.tasks, "present", checks))
            continue
        if progress:
            print(f"{group.name}: downloading and preparing", file=sys.stderr, flush=True)
        try:
            group.prepare(workspace)
        except DataError as exc:
            reports.append(GroupReport(group.name, group.tasks, "failed", verify(root, group),
                                       error=str(exc)))
            continue
        checks = verify(root, group)
        failed = any(check.problem for check in checks)
        # Verified or not, the group's downloads are spent: a bad archive must not be reused.
        for source in group.sources:
            shutil.rmtree(workspace.downloads / source, ignore_errors=True)
        reports.append(GroupReport(group.name, group.tasks, "failed" if failed else "downloaded",
                                   checks))
    if all(report.ok for report in reports):
        shutil.rmtree(workspace.downloads, ignore_errors=True)
        shutil.rmtree(root / ".tools", ignore_errors=True)  # older versions' Moses download
    return Report(directory=root, groups=tuple(reports))

