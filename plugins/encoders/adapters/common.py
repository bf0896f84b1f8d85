"""Weight files of the pretrained encoders: where they are, whether they are there, what they are.

Light on purpose (standard library only): `harness list` calls the availability checks built from
these helpers, so they look at the file system and never open a model.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from harness.plugin import HarnessError

PICKLE_SUFFIXES = (".pkl", ".pickle", ".pt", ".pth", ".bin")
"""Suffixes of files written with Python's pickle (torch.save): loading one can run code."""

_HEAD_BYTES = 1 << 20


class WeightsError(HarnessError):
    """A weight file is missing, malformed, or needs an opt-in the user has not given."""


@dataclass(frozen=True)
class WeightsSource:
    """How the user tells the harness where one set of weights is: an option or a variable.

    `option` names the spec option (e.g. `weights`), `env` the environment variable read when
    the option is unset, and `hint` says where the official files come from, in one sentence.
    """

    encoder: str
    option: str
    env: str
    hint: str

    def resolve(self, value: Path | str | None) -> Path | None:
        """Return the path given by the option, else by the environment variable, else None."""
        if value is not None and str(value) != "":
            return Path(value).expanduser()
        from_env = os.environ.get(self.env, "").strip()
        return Path(from_env).expanduser() if from_env else None

    def how_to_set(self) -> str:
        """The one-line instruction naming the option and the variable."""
        return f"set option `{self.option}:` of {self.encoder} or ${self.env}"

    def missing(self, value: Path | str | None) -> str | None:
        """Return None when the path resolves to an existing file or directory, else what to do."""
        path = self.resolve(value)
        if path is None:
            return f"needs {self.hint}; {self.how_to_set()} (see docs/encoders.md)"
        if not path.exists():
            origin = f"option {self.option}" if value else f"${self.env}"
            return (f"{origin} points to {path}, which does not exist; {self.hint} "
                    "(see docs/encoders.md)")
        return None

    def require(self, value: Path | str | None) -> Path:
        """Return the resolved existing path, or raise `WeightsError` saying what to do."""
        problem = self.missing(value)
        if problem is not None:
            raise WeightsError(f"{self.encoder}: {problem}")
        path = self.resolve(value)
        assert path is not None  # missing() returned None, so it resolved
        return path


def is_pickle(path: Path) -> bool:
    """True when `path` is a pickle-based file by its suffix (torch.save, pickle.dump)."""
    return path.suffix.lower() in PICKLE_SUFFIXES


def pickle_refusal(encoder: str, path: Path) -> str:
    """The message refusing to load a pickle without the opt-in, saying why and how to opt in."""
    return (f"{encoder}: {path} is a Python pickle, and loading a pickle can run arbitrary code; "
            f"if you trust the file, set `allow_pickle: true` in the {encoder} options, or convert "
            "it once to .safetensors (docs/encoders.md)")


def file_identity(path: Path) -> str:
    """Return a stable digest of a weight file (or every file under a directory).

    The digest covers each file's size and its first and last MiB (and, in a directory, its
    relative name): cheap for multi-GB files, and it changes when the weights change. It leaves
    out modification times and the file's own name, so a copied, renamed or reinstalled file keeps
    its identity.
    """
    path = Path(path)
    files: Iterable[Path] = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() \
        else [path]
    digest = hashlib.sha256()
    for file in files:
        size = file.stat().st_size
        name = file.relative_to(path).as_posix() if path.is_dir() else ""
        digest.update(f"{name}\0{size}\0".encode())
        with open(file, "rb") as handle:
            digest.update(handle.read(_HEAD_BYTES))
            if size > 2 * _HEAD_BYTES:
                handle.seek(size - _HEAD_BYTES)
                digest.update(handle.read(_HEAD_BYTES))
            elif size > _HEAD_BYTES:
                digest.update(handle.read())
    return digest.hexdigest()[:16]
