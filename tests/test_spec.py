"""Tests of harness.spec: YAML -> typed Spec, `--set` overrides, and file:line:field errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import SpecError
from harness.protocols import Options
from harness.registry.components import Registry, make_info
from harness.registry.loader import load_registry
from harness.spec import (
    Component,
    CorpusSection,
    Normalise,
    Source,
    Spec,
    apply_overrides,
    load_spec,
    preflight,
)

BASE = """\
# a small spec for tests
name: t
seed: 7
device: cpu
corpus:
  train: {generate: quickstart, sentences: 100}
  test: {generate: quickstart, sentences: 20, seed: 2}
  max_tokens: 12
  normalise: {lowercase: true, digits: zero}
vocab: {bpe_size: 200, dim: 16}
encoders: [avg]
decoders:
  - {name: mos-lstm, hidden: 32, epochs: 1}
metrics: [id, perm]
"""

MINIMAL = """\
name: minimal
corpus:
  train: {generate: quickstart, sentences: 10}
  test: {generate: quickstart, sentences: 5}
encoders: [avg]
decoders: [mos-lstm]
metrics: [id]
"""


@pytest.fixture(scope="module")
def registry() -> Registry:
    return load_registry()


def write(folder: Path, text: str, name: str = "spec.yaml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def line_of(text: str, needle: str) -> int:
    """1-based line of the only line of `text` containing `needle`."""
    hits = [n for n, line in enumerate(text.splitlines(), 1) if needle in line]
    assert len(hits) == 1, (needle, hits)
    return hits[0]


def edit(old: str, new: str, text: str = BASE) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


def spec_error(path: Path, registry: Registry | None, overrides: tuple[str, ...] = ()) -> SpecError:
    with pytest.raises(SpecError) as info:
        load_spec(path, overrides, registry)
    error = info.value
    assert "\n" not in str(error)
    # The message always reads FILE[:LINE]: [FIELD: ]DETAIL.
    where = error.file + (f":{error.line}" if error.line is not None else "")
    expected = f"{where}: {error.field}: {error.detail}" if error.field else f"{where}: {error.detail}"
    assert str(error) == expected
    return error


# --------------------------------------------------------------------------- valid specs

def test_valid_spec_loads_into_typed_objects(tmp_path: Path, registry: Registry) -> None:
    path = write(tmp_path, BASE)
    spec = load_spec(path, (), registry)

    assert isinstance(spec, Spec)
    assert (spec.name, spec.seed, spec.device) == ("t", 7, "cpu")
    assert isinstance(spec.corpus, CorpusSection)
    assert isinstance(spec.corpus.train, Source)
    assert (spec.corpus.train.generate, spec.corpus.train.sentences) == ("quickstart", 100)
    assert spec.corpus.train.path is None and spec.corpus.train.seed is None
    assert (spec.corpus.test.sentences, spec.corpus.test.seed) == (20, 2)
    assert spec.corpus.max_tokens == 12
    assert spec.corpus.normalise == Normalise(lowercase=True, digits="zero")
    assert (spec.vocab.bpe_size, spec.vocab.dim, spec.vocab.epochs) == (200, 16, 5)
    assert spec.source == str(path)
    assert len(spec.sha256) == 64 and int(spec.sha256, 16) >= 0

    encoders = spec.components("encoder")
    assert [type(c) for c in encoders] == [Component]
    assert [c.name for c in encoders] == ["avg"]
    assert [c.name for c in spec.components("metric")] == ["id", "perm"]


def test_component_options_validated_by_the_component_options_class(
        tmp_path: Path, registry: Registry) -> None:
    spec = load_spec(write(tmp_path, BASE), (), registry)
    decoder = spec.components("decoder")[0]
    options_class = registry.get("decoder", "mos-lstm").options

    assert decoder.name == "mos-lstm"
    assert decoder.options == {"hidden": 32, "epochs": 1}
    assert type(decoder.settings) is options_class
    assert decoder.settings.hidden == 32 and decoder.settings.epochs == 1
    assert decoder.settings.layers == options_class.model_fields["layers"].default
    identity = decoder.identity()
    assert identity["name"] == "mos-lstm" and identity["options"]["hidden"] == 32
    # Components without options get the base Options class.
    assert isinstance(spec.components("encoder")[0].settings, Options)


def test_bare_names_and_mappings_are_both_components(tmp_path: Path, registry: Registry) -> None:
    text = edit("  - {name: mos-lstm, hidden: 32, epochs: 1}\n",
                "  - mos-lstm\n  - {name: simple-lstm, hidden: 8}\n")
    spec = load_spec(write(tmp_path, text), (), registry)
    bare, mapping = spec.components("decoder")
    default_hidden = registry.get("decoder", "mos-lstm").options.model_fields["hidden"].default
    assert (bare.name, bare.options, bare.settings.hidden) == ("mos-lstm", {}, default_hidden)
    assert (mapping.options, mapping.settings.hidden) == ({"hidden": 8}, 8)
    text = edit("  - {name: mos-lstm, hidden: 32, epochs: 1}\n",
                "  - {name: mos-lstm, options: {hidden: 4}}\n")
    (explicit,) = load_spec(write(tmp_path, text), (), registry).components("decoder")
    assert (explicit.options, explicit.settings.hidden) == ({"hidden": 4}, 4)


def test_a_component_may_appear_once(tmp_path: Path, registry: Registry) -> None:
    text = edit("  - {name: mos-lstm, hidden: 32, epochs: 1}\n",
                "  - mos-lstm\n  - {name: mos-lstm, hidden: 8}\n")
    path = write(tmp_path, text)
    error = spec_error(path, registry)
    assert (error.field, error.line) == ("decoders.1.name", line_of(text, "hidden: 8"))
    assert "decoder 'mos-lstm' appears twice (also entry 0)" in error.detail


def test_rank_by_must_name_a_metric_when_set(tmp_path: Path, registry: Registry) -> None:
    text = BASE + "correlation: {rank_by: bleuu}\n"
    error = spec_error(write(tmp_path, text), registry)
    assert (error.field, error.line) == ("correlation.rank_by", line_of(text, "rank_by"))
    assert error.detail == "'bleuu' is not among the spec's metrics (id, perm)"
    assert load_spec(write(tmp_path, BASE), (), registry).correlation.rank_by == "id"


def test_settings_need_a_registry(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, BASE))
    decoder = spec.components("decoder")[0]
    assert decoder.options == {"hidden": 32, "epochs": 1}
    with pytest.raises(RuntimeError, match="not resolved"):
        _ = decoder.settings


def test_a_loaded_spec_is_not_changed_in_place(tmp_path: Path, registry: Registry) -> None:
    """Resolution makes new objects: the validated models are frozen, and each component
    carries its registry entry, looked up once."""
    spec = load_spec(write(tmp_path, BASE), (), registry)
    with pytest.raises(ValueError, match="frozen"):
        spec.seed = 3  # type: ignore[misc]
    with pytest.raises(ValueError, match="frozen"):
        spec.corpus.max_tokens = 3  # type: ignore[misc]
    (decoder,) = spec.components("decoder")
    assert decoder.info is registry.get("decoder", "mos-lstm")
    assert decoder.identity() == {"name": "mos-lstm",
                                  "options": decoder.settings.model_dump(mode="json"),
                                  "plugin": "harness-decoders",
                                  "version": decoder.info.version}


def test_defaults(tmp_path: Path, registry: Registry) -> None:
    spec = load_spec(write(tmp_path, MINIMAL), (), registry)
    assert (spec.seed, spec.device) == (1, "auto")
    assert spec.corpus.max_tokens == 15
    assert spec.corpus.normalise == Normalise(lowercase=False, digits="keep")
    assert (spec.vocab.bpe_size, spec.vocab.dim, spec.vocab.epochs) == (4000, 100, 5)
    assert (spec.encode.dtype, spec.encode.batch_size) == ("float32", 256)
    generation = spec.generation
    assert (generation.beam, generation.max_len, generation.batch_size) == (5, 30, 256)
    assert generation.length_penalty == "none" and generation.stop_after is None
    assert spec.downstream.reference is None
    assert (spec.correlation.method, spec.correlation.rank_by) == ("spearman", "id")
    assert spec.report.formats == ["md"]
    options_class = registry.get("decoder", "mos-lstm").options
    assert spec.components("decoder")[0].settings == options_class()


def test_encoders_all_expands_to_every_ok_encoder(tmp_path: Path, registry: Registry) -> None:
    spec = load_spec(write(tmp_path, edit("encoders: [avg]", "encoders: all")), (), registry)
    expected = [info.name for info in registry if info.kind == "encoder" and info.status() == "ok"]
    assert expected, "the installed plugins register at least one available encoder"
    assert [c.name for c in spec.components("encoder")] == expected
    assert all(isinstance(c.settings, Options) for c in spec.components("encoder"))


ALL_ENCODERS = BASE.replace("encoders: [avg]", "encoders: all").replace(
    "{name: mos-lstm, hidden: 32, epochs: 1}", "mos-lstm")


def fake_registry(encoders: dict[str, str | None]) -> Registry:
    """A registry with the named encoders (value: unavailability reason), a decoder, metrics
    and the default executor."""
    fake = Registry()
    fake.add(make_info("executor", "local", lambda options, context: None))
    for name, reason in encoders.items():
        fake.add(make_info("encoder", name, lambda options, context: None,
                           availability=lambda reason=reason: reason))
    fake.add(make_info("decoder", "mos-lstm", lambda options, context: None))
    for metric in ("id", "perm"):
        fake.add(make_info("metric", metric, lambda options, context: None))
    return fake


def test_encoders_all_skips_unavailable_encoders(tmp_path: Path) -> None:
    fake = fake_registry({"zeta": None, "alpha": None, "needs-weights": "run harness data get"})
    spec = load_spec(write(tmp_path, ALL_ENCODERS), (), fake)
    assert [c.name for c in spec.components("encoder")] == ["alpha", "zeta"]


def test_encoders_all_without_available_encoders_is_an_error(tmp_path: Path) -> None:
    text = ALL_ENCODERS
    path = write(tmp_path, text)
    error = spec_error(path, fake_registry({"needs-weights": "download it"}))
    assert (error.file, error.line, error.field) == (str(path), line_of(text, "encoders:"), "encoders")
    assert "no available encoder" in error.detail



def test_an_unavailable_encoder_is_a_problem_that_stops_the_run(tmp_path: Path) -> None:
    from harness.errors import HarnessError
    from harness.runner import run_spec

    text = ALL_ENCODERS.replace("encoders: all", "encoders: [alpha, needs-weights]")
    path = write(tmp_path, text)
    spec = load_spec(path, (), fake_registry({"alpha": None,
                                              "needs-weights": "set NEEDS_WEIGHTS_PATH"}))
    (problem,) = preflight(spec)
    assert (problem.file, problem.field) == (str(path), "encoders.1.name")
    assert problem.line == line_of(text, "encoders:")
    assert problem.detail == "encoder 'needs-weights' is unavailable: set NEEDS_WEIGHTS_PATH"
    with pytest.raises(HarnessError, match="needs-weights' is unavailable"):
        run_spec(spec, tmp_path / "out", cache=None)
    assert not (tmp_path / "out").exists()


def test_a_missing_file_with_a_prepare_hint_is_a_problem_not_an_error(tmp_path: Path) -> None:
    text = BASE.replace("train: {generate: quickstart, sentences: 100}",
                        "train: {path: data/train.txt, prepare: harness data newscrawl}")
    path = write(tmp_path, text)
    spec = load_spec(path, (), load_registry())
    (problem,) = preflight(spec)
    assert problem.field == "corpus.train.path"
    assert problem.detail.endswith("train.txt; make it with: harness data newscrawl")


# --------------------------------------------------------------------------- paths

def test_relative_paths_resolve_against_the_spec_folder(tmp_path: Path, registry: Registry,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "specs"
    write(folder / "data", "one two\n", "train.txt")
    write(folder / "data", "three four\n", "test.txt")
    write(folder, "{}\n", "table.yaml")
    text = edit("  train: {generate: quickstart, sentences: 100}\n"
                "  test: {generate: quickstart, sentences: 20, seed: 2}\n",
                "  train: {path: data/train.txt, limit: 50}\n  test: {path: data/test.txt}\n")
    text += "downstream: {reference: table.yaml}\n"
    path = write(folder, text)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)

    spec = load_spec(Path("..") / "specs" / "spec.yaml", (), registry)
    assert spec.corpus.train.path == folder.resolve() / "data" / "train.txt"
    assert spec.corpus.train.limit == 50
    assert spec.corpus.test.path == folder.resolve() / "data" / "test.txt"
    assert spec.downstream.reference == folder.resolve() / "table.yaml"
    # An absolute path stays as it is.
    absolute = load_spec(path, (f"corpus.test.path={folder / 'data' / 'train.txt'}",), registry)
    assert absolute.corpus.test.path == folder / "data" / "train.txt"


def test_set_paths_resolve_against_the_current_directory(tmp_path: Path, registry: Registry,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "specs"
    write(folder, "in the spec folder\n", "held.txt")
    path = write(folder, BASE)
    cwd = tmp_path / "cwd"
    write(cwd, "held out\n", "held.txt")
    write(cwd, "{}\n", "table.yaml")
    monkeypatch.chdir(cwd)

    spec = load_spec(path, ("corpus.test={path: held.txt}", "downstream.reference=table.yaml"),
                     registry)
    assert spec.corpus.test.path == cwd / "held.txt"
    assert spec.corpus.test.generate is None
    assert spec.downstream.reference == cwd / "table.yaml"


def test_missing_corpus_file_names_field_and_line(tmp_path: Path, registry: Registry) -> None:
    text = edit("train: {generate: quickstart, sentences: 100}", "train: {path: data/missing.txt}")
    path = write(tmp_path, text)
    error = spec_error(path, registry)
    assert (error.file, error.line, error.field) == (str(path), line_of(text, "train:"),
                                                      "corpus.train.path")
    assert error.detail == f"file not found: {tmp_path.resolve() / 'data' / 'missing.txt'}"


@pytest.mark.parametrize("in_spec_folder", [False, True])
def test_missing_file_given_with_set_is_reported_against_set(
        tmp_path: Path, registry: Registry, monkeypatch: pytest.MonkeyPatch,
        in_spec_folder: bool) -> None:
    path = write(tmp_path / "specs", BASE)
    cwd = path.parent if in_spec_folder else tmp_path
    monkeypatch.chdir(cwd)
    error = spec_error(path, registry, ("corpus.test={path: nope.txt}",))
    assert (error.file, error.line, error.field) == ("--set", None, "corpus.test.path")
    assert error.detail == f"file not found: {cwd / 'nope.txt'}"


def test_spec_file_not_found(tmp_path: Path, registry: Registry) -> None:
    error = spec_error(tmp_path / "absent.yaml", registry)
    assert (error.file, error.line, error.field) == (str(tmp_path / "absent.yaml"), None, None)
    assert error.detail == "spec file not found"


# --------------------------------------------------------------------------- --set

@pytest.mark.parametrize(("override", "loc", "value"), [
    ("seed=3", ("seed",), 3),
    ("decoders.0.lr=0.5", ("decoders", 0, "lr"), 0.5),
    ("generation.length_penalty=mean", ("generation", "length_penalty"), "mean"),
    ("corpus.normalise.lowercase=no", ("corpus", "normalise", "lowercase"), False),
    ("report.formats=[md, html]", ("report", "formats"), ["md", "html"]),
    ("corpus.train={path: a.txt}", ("corpus", "train"), {"path": "a.txt"}),
    ("name=plain text", ("name",), "plain text"),
    ("name=a=b", ("name",), "a=b"),
    ("device=cuda:1", ("device",), "cuda:1"),
    ("name=", ("name",), ""),
])
def test_set_values_are_parsed_as_yaml(override: str, loc: tuple, value: object) -> None:
    data = {"seed": 1, "name": "x", "decoders": [{"name": "mos-lstm"}],
            "corpus": {"normalise": {"lowercase": True}, "train": {"generate": "g"}}}
    assert apply_overrides(data, [override]) == {loc}
    target: object = data
    for part in loc:
        target = target[part]  # type: ignore[index]
    assert target == value


def test_set_creates_nested_keys() -> None:
    data: dict = {"vocab": {"dim": 3}}
    changed = apply_overrides(data, ["vocab.bpe_size=500", "generation.beam=2", "a.b.c=1"])
    assert data == {"vocab": {"dim": 3, "bpe_size": 500}, "generation": {"beam": 2},
                    "a": {"b": {"c": 1}}}
    assert changed == {("vocab", "bpe_size"), ("generation", "beam"), ("a", "b", "c")}


def test_set_list_index_turns_a_bare_component_name_into_a_mapping() -> None:
    data: dict = {"decoders": ["mos-lstm", {"name": "simple-lstm", "hidden": 8}],
                  "encoders": ["avg"]}
    apply_overrides(data, ["decoders.0.hidden=32", "decoders.1.hidden=16", "encoders.0=hier"])
    assert data["decoders"] == [{"name": "mos-lstm", "hidden": 32},
                                {"name": "simple-lstm", "hidden": 16}]
    assert data["encoders"] == ["hier"]


def test_set_overrides_reach_the_typed_spec(tmp_path: Path, registry: Registry) -> None:
    text = edit("  - {name: mos-lstm, hidden: 32, epochs: 1}\n", "  - mos-lstm\n")
    path = write(tmp_path, text)
    plain = load_spec(path, (), registry)
    spec = load_spec(path, ("seed=5", "vocab.dim=8", "decoders.0.hidden=64", "decoders.0.lr=0.01",
                            "generation.length_penalty=paper", "report.formats=[md, html]",
                            "device=cuda:0", "corpus.normalise={lowercase: false}"), registry)
    assert (spec.seed, spec.vocab.dim, spec.device) == (5, 8, "cuda:0")
    decoder = spec.components("decoder")[0]
    assert (decoder.settings.hidden, decoder.settings.lr) == (64, 0.01)
    assert spec.generation.length_penalty == "paper"
    assert spec.report.formats == ["md", "html"]
    assert spec.corpus.normalise == Normalise(lowercase=False, digits="keep")
    assert spec.sha256 != plain.sha256


def test_set_encoders_all(tmp_path: Path, registry: Registry) -> None:
    spec = load_spec(write(tmp_path, BASE), ("encoders=all",), registry)
    assert [c.name for c in spec.components("encoder")] == [
        info.name for info in registry if info.kind == "encoder" and info.status() == "ok"]


@pytest.mark.parametrize("override", ["vocab.dim", "vocab..dim=3", "=3", ".dim=3", "vocab.dim!=3",
                                      "vocab dim=3"])
def test_bad_set_syntax(tmp_path: Path, registry: Registry, override: str) -> None:
    error = spec_error(write(tmp_path, BASE), registry, (override,))
    assert (error.file, error.line, error.field) == ("--set", None, None)
    assert repr(override) in error.detail
    assert str(error).startswith("--set: ")


def test_set_of_an_unknown_key(tmp_path: Path, registry: Registry) -> None:
    error = spec_error(write(tmp_path, BASE), registry, ("vocab.colour=3",))
    assert (error.file, error.line, error.field) == ("--set", None, "vocab.colour")
    assert error.detail == "unknown key; expected one of: bpe_size, dim, epochs, model, vectors"
    assert str(error) == ("--set: vocab.colour: unknown key; expected one of: "
                          "bpe_size, dim, epochs, model, vectors")


def test_set_of_an_unknown_top_level_key(tmp_path: Path, registry: Registry) -> None:
    error = spec_error(write(tmp_path, BASE), registry, ("colour=red",))
    assert (error.file, error.line, error.field) == ("--set", None, "colour")


def test_set_of_a_wrong_type(tmp_path: Path, registry: Registry) -> None:
    error = spec_error(write(tmp_path, BASE), registry, ("vocab.dim=-1",))
    assert (error.file, error.line, error.field) == ("--set", None, "vocab.dim")
    assert "greater than 0" in error.detail and "-1" in error.detail


def test_set_of_an_unknown_component_option(tmp_path: Path, registry: Registry) -> None:
    error = spec_error(write(tmp_path, BASE), registry, ("decoders.0.hiden=3",))
    assert (error.file, error.line, error.field) == ("--set", None, "decoders.0.hiden")
    assert error.detail.startswith("unknown key; did you mean 'hidden'? expected one of: ")


@pytest.mark.parametrize(("override", "field", "detail"), [
    ("corpus.train.path=a.txt", "corpus.train", "give exactly one of `generate: NAME` or "
                                                "`path: FILE`"),
    ("vocab.model=bpe.model", "vocab", "give both `model:` and `vectors:`"),
])
def test_a_section_error_caused_by_set_names_the_override(
        tmp_path: Path, registry: Registry, override: str, field: str, detail: str) -> None:
    """The override made the section invalid: the error points at `--set`, not at the line
    where the (valid) section was written."""
    error = spec_error(write(tmp_path, BASE), registry, (override,))
    assert (error.file, error.line, error.field) == ("--set", None, field)
    assert error.detail.startswith(detail)


def test_set_of_a_wrong_component_option_type(tmp_path: Path, registry: Registry) -> None:
    error = spec_error(write(tmp_path, BASE), registry, ("decoders.0.hidden=big",))
    assert (error.file, error.line, error.field) == ("--set", None, "decoders.0.hidden")
    assert "valid integer" in error.detail and "'big'" in error.detail


def test_set_of_an_unknown_component_name(tmp_path: Path, registry: Registry) -> None:
    error = spec_error(write(tmp_path, BASE), registry, ("encoders.0=avgg",))
    assert (error.file, error.line, error.field) == ("--set", None, "encoders.0.name")
    assert "did you mean 'avg'?" in error.detail


def test_set_of_a_missing_list_item(tmp_path: Path, registry: Registry) -> None:
    error = spec_error(write(tmp_path, BASE), registry, ("decoders.3.hidden=32",))
    assert (error.file, error.line, error.field) == ("--set", None, "decoders.3")
    assert error.detail.endswith("decoders has 1 entry (0 to 0), so 3 names none of them")


def test_set_of_unbalanced_yaml_says_where_it_breaks(tmp_path: Path, registry: Registry) -> None:
    # a value that opens a YAML list or mapping must be one; other unparseable text is text
    error = spec_error(write(tmp_path, BASE), registry, ("name=[unclosed",))
    assert (error.file, error.field) == ("--set", "name")
    assert error.detail == ("'name=[unclosed': the value is not valid YAML at column 10: "
                            "expected ',' or ']', but got '<stream end>'")


# --------------------------------------------------------------------------- spec errors

def test_malformed_yaml_unclosed_bracket(tmp_path: Path, registry: Registry) -> None:
    text = edit("encoders: [avg]", "encoders: [avg")
    path = write(tmp_path, text)
    error = spec_error(path, registry)
    # PyYAML notices at the next line; the message says where the sequence was opened.
    assert (error.file, error.line, error.field) == (str(path), line_of(text, "decoders:"), None)
    assert error.detail.startswith("malformed YAML at column 9: ")
    assert f"flow sequence at line {line_of(text, 'encoders:')}" in error.detail
    assert "expected ',' or ']'" in error.detail


def test_malformed_yaml_bad_indentation(tmp_path: Path, registry: Registry) -> None:
    text = edit("  max_tokens: 12", "   max_tokens: 12")
    path = write(tmp_path, text)
    error = spec_error(path, registry)
    assert (error.file, error.line, error.field) == (str(path), line_of(text, "max_tokens"), None)
    assert error.detail.startswith("malformed YAML at column 4: ")
    assert "block mapping" in error.detail


def test_malformed_yaml_tab(tmp_path: Path, registry: Registry) -> None:
    text = edit("  max_tokens: 12", "\tmax_tokens: 12")
    path = write(tmp_path, text)
    error = spec_error(path, registry)
    assert (error.file, error.line, error.field) == (str(path), line_of(text, "max_tokens"), None)
    assert "'\\t'" in error.detail


def test_malformed_yaml_second_document(tmp_path: Path, registry: Registry) -> None:
    text = BASE + "---\nname: other\n"
    path = write(tmp_path, text)
    error = spec_error(path, registry)
    assert (error.file, error.line) == (str(path), line_of(text, "---"))
    assert "single document" in error.detail


@pytest.mark.parametrize("text", ["- name: t\n- seed: 1\n", "just a string\n", "", "# only a comment\n",
                                  "42\n"])
def test_document_must_be_a_mapping(tmp_path: Path, registry: Registry, text: str) -> None:
    path = write(tmp_path, text)
    error = spec_error(path, registry)
    assert (error.file, error.line, error.field) == (str(path), 1, None)
    assert error.detail == "a spec must be a YAML mapping (name:, corpus:, encoders:, ...)"


def test_duplicate_top_level_key(tmp_path: Path, registry: Registry) -> None:
    text = BASE + "seed: 3\n"
    path = write(tmp_path, text)
    error = spec_error(path, registry)
    assert (error.file, error.line, error.field) == (str(path), len(text.splitlines()), "seed")
    assert error.detail == "duplicate key 'seed'"


def test_duplicate_nested_key(tmp_path: Path, registry: Registry) -> None:
    text = edit("normalise: {lowercase: true, digits: zero}",
                "normalise: {lowercase: true, lowercase: false}")
    path = write(tmp_path, text)
    error = spec_error(path, registry)
    assert (error.file, error.line, error.field) == (str(path), line_of(text, "normalise"),
                                                      "corpus.normalise.lowercase")
    assert error.detail == "duplicate key 'lowercase'"


def test_unknown_top_level_key_lists_the_expected_keys(tmp_path: Path, registry: Registry) -> None:
    text = edit("vocab: {", "colour: red\nvocab: {")
    path = write(tmp_path, text)
    error = spec_error(path, registry)
    assert (error.file, error.line, error.field) == (str(path), line_of(text, "colour"), "colour")
    assert error.detail == ("unknown key; expected one of: " + ", ".join(Spec.model_fields)
                            + ", or a section an installed analysis reads: breakdown (analysis "
                              "lengths), correlation (analysis correlation), privacy (analysis "
                              "privacy), probes (analysis probes)")
    for key in ("name", "seed", "device", "corpus", "vocab", "encoders", "decoders", "metrics"):
        assert key in error.detail


def test_unknown_nested_key(tmp_path: Path, registry: Registry) -> None:
    text = edit("digits: zero}", "digits: zero, upper: true}")
    path = write(tmp_path, text)
    error = spec_error(path, registry)
    assert (error.file, error.line, error.field) == (str(path), line_of(text, "normalise"),
                                                      "corpus.normalise.upper")
    assert error.detail == "unknown key; expected one of: lowercase, digits"
    assert str(error) == (f"{path}:{line_of(text, 'normalise')}: corpus.normalise.upper: "
                          "unknown key; expected one of: lowercase, digits")


def test_misindented_section_is_an_unknown_key_of_its_parent(tmp_path: Path,
                                                             registry: Registry) -> None:
    text = edit("vocab: {", "  vocab: {")
    path = write(tmp_path, text)
    error = spec_error(path, registry)
    assert (error.file, error.line, error.field) == (str(path), line_of(text, "vocab"), "corpus.vocab")
    assert error.detail.startswith("unknown key; expected one of: train, test")


@pytest.mark.parametrize(("old", "new", "field", "needles"), [
    ("seed: 7", 'seed: "x"', "seed", ["valid integer", "'x'"]),
    ("dim: 16}", "dim: -1}", "vocab.dim", ["greater than 0", "-1"]),
    ("device: cpu", "device: gpu", "device", ["'gpu'"]),
    ("max_tokens: 12", "max_tokens: [1]", "corpus.max_tokens", ["valid integer"]),
    ("digits: zero", "digits: drop", "corpus.normalise.digits", ["'keep'", "'zero'", "'drop'"]),
    ("name: t", "name: has spaces", "name", ["pattern", "'has spaces'"]),
    ("sentences: 100", "sentences: 0", "corpus.train.sentences", ["greater than 0"]),
    ("metrics: [id, perm]", "metrics: []", "metrics", ["at least 1"]),
    ("metrics: [id, perm]", "metrics: id", "metrics", ["valid list"]),
    ("encoders: [avg]", "encoders: avg", "encoders", ["expected `all` or a list of encoder names"]),
    ("encoders: [avg]", "encoders: [5]", "encoders.0", ["a component name or a mapping"]),
])
def test_wrong_type(tmp_path: Path, registry: Registry, old: str, new: str, field: str,
                    needles: list[str]) -> None:
    text = edit(old, new)
    path = write(tmp_path, text)
    error = spec_error(path, registry)
    assert (error.file, error.line, error.field) == (str(path), line_of(text, new), field)
    for needle in needles:
        assert needle in error.detail
    assert "[" not in error.field  # no pydantic union tags such as `list[Component]`


def test_missing_required_nested_field(tmp_path: Path, registry: Registry) -> None:
    text = edit("  train: {generate: quickstart, sentences: 100}\n", "")
    path = write(tmp_path, text)
    error = spec_error(path, registry)
    assert (error.file, error.line, error.field) == (str(path), line_of(text, "corpus:"), "corpus.train")
    assert error.detail == "required field is missing"
    assert str(error) == f"{path}:{line_of(text, 'corpus:')}: corpus.train: required field is missing"


def test_missing_name(tmp_path: Path, registry: Registry) -> None:
    text = edit("name: t\n", "")
    path = write(tmp_path, text)
    error = spec_error(path, registry)
    # A missing top-level key is reported at the top-level mapping's first line.
    assert (error.file, error.line, error.field) == (str(path), line_of(text, "seed: 7"), "name")
    assert error.detail == "required field is missing"


def test_missing_component_name(tmp_path: Path, registry: Registry) -> None:
    text = edit("{name: mos-lstm, hidden: 32, epochs: 1}", "{hidden: 32}")
    path = write(tmp_path, text)
    error = spec_error(path, registry)
    assert (error.file, error.line, error.field) == (str(path), line_of(text, "hidden"),
                                                      "decoders.0.name")
    assert error.detail.startswith("required field is missing")


@pytest.mark.parametrize("source", ["{generate: quickstart, sentences: 100, path: a.txt}",
                                    "{sentences: 100}", "{}"])
def test_source_needs_exactly_one_of_generate_and_path(tmp_path: Path, registry: Registry,
                                                       source: str) -> None:
    text = edit("{generate: quickstart, sentences: 100}", source)
    path = write(tmp_path, text)
    error = spec_error(path, registry)
    assert (error.file, error.line, error.field) == (str(path), line_of(text, "train:"), "corpus.train")
    assert error.detail == "give exactly one of `generate: NAME` or `path: FILE`"


@pytest.mark.parametrize(("source", "needle"), [
    ("{generate: quickstart}", "`generate` needs `sentences: N`"),
    ("{generate: quickstart, sentences: 5, limit: 3}", "`limit` applies to `path`"),
    ("{path: a.txt, sentences: 3}", "`sentences`/`seed` apply to `generate`"),
])
def test_source_options_belong_to_their_kind(tmp_path: Path, registry: Registry, source: str,
                                             needle: str) -> None:
    text = edit("{generate: quickstart, sentences: 100}", source)
    path = write(tmp_path, text)
    error = spec_error(path, registry)
    assert (error.file, error.line, error.field) == (str(path), line_of(text, "train:"), "corpus.train")
    assert needle in error.detail


def test_unknown_encoder_suggests_a_close_name(tmp_path: Path, registry: Registry) -> None:
    text = edit("encoders: [avg]", "encoders: [avgg]")
    path = write(tmp_path, text)
    error = spec_error(path, registry)
    assert (error.file, error.line, error.field) == (str(path), line_of(text, "encoders"),
                                                      "encoders.0.name")
    assert error.detail == "unknown encoder 'avgg': did you mean 'avg'? (see `harness list`)"


def test_unknown_metric_and_decoder(tmp_path: Path, registry: Registry) -> None:
    text = edit("metrics: [id, perm]", "metrics: [id, perm, idd]")
    path = write(tmp_path, text)
    error = spec_error(path, registry)
    assert (error.line, error.field) == (line_of(text, "metrics"), "metrics.2.name")
    assert "unknown metric 'idd'" in error.detail and "'id'" in error.detail

    text = edit("name: mos-lstm,", "name: no-such-decoder-at-all,")
    error = spec_error(write(tmp_path, text), registry)
    assert (error.line, error.field) == (line_of(text, "no-such-decoder"), "decoders.0.name")
    assert "unknown decoder 'no-such-decoder-at-all'" in error.detail


def test_unknown_component_option_lists_the_valid_keys(tmp_path: Path, registry: Registry) -> None:
    text = edit("hidden: 32", "hiden: 32")
    path = write(tmp_path, text)
    error = spec_error(path, registry)
    assert (error.file, error.line, error.field) == (str(path), line_of(text, "hiden"),
                                                      "decoders.0.hiden")
    valid = registry.get("decoder", "mos-lstm").options.model_fields
    assert error.detail == ("unknown key; did you mean 'hidden'? expected one of: "
                            + ", ".join(valid))
    assert "hidden" in valid and "layers" in valid


def test_option_of_a_component_without_options(tmp_path: Path, registry: Registry) -> None:
    text = edit("encoders: [avg]", "encoders: [{name: avg, size: 3}]")
    path = write(tmp_path, text)
    error = spec_error(path, registry)
    assert (error.file, error.line, error.field) == (str(path), line_of(text, "encoders"),
                                                      "encoders.0.size")
    assert error.detail == "unknown key; this takes no options"


def test_wrong_component_option_type(tmp_path: Path, registry: Registry) -> None:
    text = edit("hidden: 32", "hidden: big")
    path = write(tmp_path, text)
    error = spec_error(path, registry)
    assert (error.file, error.line, error.field) == (str(path), line_of(text, "hidden"),
                                                      "decoders.0.hidden")
    assert "valid integer" in error.detail and "'big'" in error.detail


def test_component_errors_point_at_their_own_line(tmp_path: Path, registry: Registry) -> None:
    text = edit("  - {name: mos-lstm, hidden: 32, epochs: 1}\n",
                "  - {name: mos-lstm, hidden: 32, epochs: 1}\n  - {name: mos-lstm, epochs: 0}\n")
    path = write(tmp_path, text)
    error = spec_error(path, registry)
    assert (error.line, error.field) == (line_of(text, "epochs: 0"), "decoders.1.epochs")


def test_the_first_error_by_line_is_reported_with_a_count(tmp_path: Path, registry: Registry) -> None:
    text = edit("seed: 7", "seed: x")
    text = edit("dim: 16}", "dim: -1}", text)
    path = write(tmp_path, text)
    error = spec_error(path, registry)
    assert (error.line, error.field) == (line_of(text, "seed: x"), "seed")
    assert error.detail.endswith("(and 1 more)")


def test_a_decoder_can_be_restricted_to_some_encoders(tmp_path: Path, registry: Registry) -> None:
    text = BASE.replace("encoders: [avg]", "encoders: [avg, hier]").replace(
        "  - {name: mos-lstm, hidden: 32, epochs: 1}\n",
        "  - {name: mos-lstm, hidden: 32, epochs: 1}\n"
        "  - {name: simple-lstm, hidden: 16, encoders: [hier]}\n")
    spec = load_spec(write(tmp_path, text), (), registry)
    first, second = spec.components("decoder")
    assert first.encoders is None and second.encoders == ["hier"]
    assert second.settings.hidden == 16 and "encoders" not in second.identity()["options"]
    # the jobs: every decoder for every encoder it is trained for, encoder by encoder
    assert [(e.name, d.name) for e, d in spec.pairs()] == [
        ("avg", "mos-lstm"), ("hier", "mos-lstm"), ("hier", "simple-lstm")]
    bad = text.replace("encoders: [hier]}", "encoders: [gem]}")
    path = write(tmp_path, bad, "bad.yaml")
    error = spec_error(path, registry)
    assert (error.field, error.line) == ("decoders.1.encoders", line_of(bad, "simple-lstm"))
    assert error.detail == "gem not among the spec's encoders (avg, hier)"
    misplaced = text.replace("encoders: [avg, hier]", "encoders: [{name: avg, encoders: [avg]}]")
    error = spec_error(write(tmp_path, misplaced, "m.yaml"), registry)
    assert error.detail == "only decoders take `encoders:`"


# --------------------------------------------------------------------------- readiness

def test_missing_senteval_files_are_problems_found_before_any_work(tmp_path: Path,
                                                                   registry: Registry) -> None:
    (tmp_path / "senteval").mkdir()
    text = BASE + "downstream: {tasks: [MR, syn-order], data_dir: senteval}\n"
    spec = load_spec(write(tmp_path, text), (), registry)
    (problem,) = preflight(spec)  # the synthetic task needs no files
    assert (problem.field, problem.line) == ("downstream.tasks.0.name", line_of(text, "tasks"))
    assert problem.detail == (
        f"task MR needs {tmp_path / 'senteval' / 'MR' / 'rt-polarity.pos'} and 1 more; make it "
        f"with: harness data senteval --dir {tmp_path / 'senteval'} --tasks MR")


def test_senteval_tasks_need_a_data_dir(tmp_path: Path, registry: Registry) -> None:
    """Whether a task reads SentEval's files is known once it is built: preflight finds it,
    before any work (loading a spec builds no task)."""
    text = BASE + "downstream: {tasks: [MR]}\n"
    spec = load_spec(write(tmp_path, text), (), registry)
    with pytest.raises(SpecError) as info:
        preflight(spec)
    error = info.value
    assert (error.file, error.line) == (str(tmp_path / "spec.yaml"), line_of(text, "downstream:"))
    assert error.field == "downstream.data_dir"
    assert "task 'mr' reads its files from a data directory: set it" in error.detail
    assert "(make one with `harness data senteval --dir DIR --tasks MR`)" in error.detail


def test_the_command_that_makes_task_data_is_the_task_plugins() -> None:
    """The core knows no task's files: a task that says how its files are made
    (`PreparedData`) is asked, tasks of one plugin share one command, and a task that does not
    say adds none."""
    from harness.protocols.task import data_command
    from harness_plugins.tasks.senteval.tasks import senteval_task

    mr, trec, sts13 = (senteval_task(name) for name in ("MR", "TREC", "STS13"))
    assert data_command([mr, trec, sts13, object()], "D") == (
        "harness data senteval --dir D --tasks MR,TREC,STS13")
    assert data_command([object()], "D") is None


def test_relative_paths_in_options_resolve_against_the_spec_folder(
        tmp_path: Path, registry: Registry, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "specs"
    text = edit("encoders: [avg]", "encoders: [avg, {name: infersent, weights: w/infersent2.pkl}]")
    path = write(folder, text)
    monkeypatch.chdir(tmp_path)
    spec = load_spec(path, (), registry)
    assert spec.components("encoder")[1].settings.weights == folder.resolve() / "w" / "infersent2.pkl"
    again = load_spec(path, ("encoders.1.weights=mine.pkl",), registry)
    assert again.components("encoder")[1].settings.weights == tmp_path / "mine.pkl"


def test_a_published_table_is_not_mistaken_for_a_broken_spec(registry: Registry) -> None:
    table = Path(__file__).resolve().parents[1] / "benchmarks" / "paper" / "v2s-table4.yaml"
    error = spec_error(table, registry)
    assert error.line == line_of(table.read_text(), "scores:")
    assert error.detail.startswith("this is a table of published scores (`scores:`), not a spec")


# --------------------------------------------------------------------------- executor

def test_executor_is_a_bare_name_or_a_mapping(tmp_path: Path, registry: Registry) -> None:
    assert load_spec(write(tmp_path, BASE), (), registry).executor.name == "local"
    spec = load_spec(write(tmp_path, BASE + "executor: ray\n"), ("executor.cpus=2",), registry)
    settings = spec.executor.settings
    assert (spec.executor.name, settings.cpus, settings.gpus) == ("ray", 2.0, None)
    assert settings.retries == 3 and spec.executor.info.kind == "executor"
    text = BASE + "executor: {name: local, gpus: 1}\n"
    error = spec_error(write(tmp_path, text), registry)
    assert (error.field, error.line) == ("executor.gpus", line_of(text, "executor:"))
    assert error.detail.startswith("unknown key")
    error = spec_error(write(tmp_path, BASE), registry, ("executor=rey",))
    assert (error.file, error.field) == ("--set", "executor.name")
    assert "did you mean 'ray'?" in error.detail
    error = spec_error(write(tmp_path, BASE), registry, ("executor=ray", "executor.retries=true"))
    assert (error.field, error.detail) == ("executor.retries", "expected a number, got true")
