"""What every spec document has, a benchmark spec (`harness.spec.schema.Spec`) or a table
spec: a name, a seed, where its reading found each field, its hash and data after overrides,
and the analyses' sections it carries."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import Field, PrivateAttr
from typing_extensions import Self

from harness.protocols import ComponentInfo, Settings
from harness.spec.positions import Positions
from harness.spec.sections import Strict

S = TypeVar("S")


class SpecDocument(Strict):
    """What every spec document has: a name, a seed, and where its reading found each field."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    seed: int = Field(default=1, ge=0, lt=2**32)  # numpy's and torch's seeds are 32-bit, >= 0

    _positions: Positions = PrivateAttr(default_factory=Positions)
    _sha256: str = PrivateAttr(default="")
    _document: dict[str, Any] = PrivateAttr(default_factory=dict)
    _sections: dict[str, Settings] = PrivateAttr(default_factory=dict)
    _by: tuple[ComponentInfo, ...] = PrivateAttr(default=())

    def __getattr__(self, name: str) -> Any:
        """An analysis's section by its key (`spec.privacy`), beside the core's fields."""
        try:
            return super().__getattr__(name)  # type: ignore[misc]
        except AttributeError:
            private = object.__getattribute__(self, "__pydantic_private__") or {}
            sections = private.get("_sections") or {}
            if name in sections:
                return sections[name]
            raise

    def with_sections(self, sections: dict[str, Settings], by: tuple[ComponentInfo, ...] = ()
                      ) -> Self:
        """A copy carrying the analyses' sections (key -> validated settings) and, in `by`,
        the analyses that can run it without a job (`AnalysisParts.tables`)."""
        copy = self.model_copy()
        copy._sections, copy._by = dict(sections), tuple(by)
        return copy

    def with_section(self, key: str, section: Settings) -> Self:
        """A copy with the analysis section `key` replaced by `section`."""
        return self.with_sections({**self._sections, key: section}, self._by)

    def section(self, key: str, kind: type[S]) -> S:
        """The analysis section `key` as the settings class `kind` its analysis declares
        (`harness.protocols.SpecView.section`)."""
        found = self._sections.get(key)
        if found is None:
            raise LookupError(f"no installed analysis declares the spec section {key!r} "
                              "(`harness list` shows the analyses)")
        if not isinstance(found, kind):
            raise TypeError(f"the spec section {key!r} is a {type(found).__name__}, not "
                            f"{kind.__name__}: read it as the settings class its analysis "
                            "declares")
        return found

    @property
    def sections(self) -> dict[str, Settings]:
        """The analyses' sections, key -> validated settings (defaults where not given)."""
        return dict(self._sections)

    @property
    def table_analyses(self) -> tuple[ComponentInfo, ...]:
        """The analyses that compute results from published tables alone, in registration
        order (`AnalysisParts.tables`): what a `TableSpec` runs."""
        return self._by

    def record(self) -> dict[str, Any]:
        """The spec's JSON form, its analyses' sections beside the core's."""
        return {**self.model_dump(mode="json"),
                **{key: section.model_dump(mode="json")
                   for key, section in self._sections.items()}}

    def located(self, positions: Positions, sha256: str,
                document: dict[str, Any] | None = None) -> Self:
        """A copy of this spec that knows where it was read from (`positions`), the hash of
        its text after overrides (`sha256`) and that text's data (`document`)."""
        copy = self.model_copy()
        copy._positions, copy._sha256 = positions, sha256
        copy._document = dict(document or {})
        return copy

    @property
    def document(self) -> dict[str, Any]:
        """The spec file's data as read, after overrides (defences' seeds left out): what a
        registration compares with the committed file (`harness.analyses.correlation
        .registration`)."""
        return dict(self._document)

    @property
    def positions(self) -> Positions:
        """The file, line and `--set` origin of every field, for errors found after loading."""
        return self._positions

    @property
    def source(self) -> str:
        """The file the spec was read from."""
        return self._positions.file

    @property
    def sha256(self) -> str:
        """Hash of the spec after overrides, as recorded in provenance."""
        return self._sha256
