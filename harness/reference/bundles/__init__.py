"""Reference bundles shipped with the harness, joined by name (`reference: quickstart`).

- `quickstart`: benchmarks/quickstart.yaml's nine encoders (docs/results.md, "Bundles", says
  how it was made and how to make it again).
- `reference`: benchmarks/reference.yaml's population, 27 encoders in five families and two
  controls on Tatoeba (docs/findings.md); joining it needs that spec's data.
"""

from __future__ import annotations

from pathlib import Path

FOLDER = Path(__file__).resolve().parent
SUFFIX = ".zip"


def shipped_names() -> list[str]:
    """The names of the bundles shipped with the harness."""
    return sorted(path.stem for path in FOLDER.glob(f"*{SUFFIX}"))


def shipped_bundle(name: str) -> Path | None:
    """The file of the shipped bundle `name`, or None when none is shipped by that name."""
    path = FOLDER / f"{name}{SUFFIX}"
    return path if "/" not in name and path.is_file() else None
