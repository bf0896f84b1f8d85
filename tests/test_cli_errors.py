"""The `harness` command's error contract: user errors exit 2 with one `error: file:line: field`
line on stderr and no traceback (unless --debug), and a bad spec writes nothing anywhere."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner, Result

from harness.cli import main
from harness.errors import SpecError

REPO = Path(__file__).resolve().parents[1]
QUICKSTART = REPO / "benchmarks" / "quickstart.yaml"

GOOD = """\
name: cli
seed: 1
device: cpu
corpus:
  train: {generate: quickstart, sentences: 50}
  test: {generate: quickstart, sentences: 10}
vocab: {bpe_size: 100, dim: 8}
encoders: [avg]
decoders:
  - {name: mos-lstm, hidden: 8, epochs: 1}
metrics: [id]
"""

# (id, old, new, field or None, text in the message); the line is that of `new`.
BAD_SPECS = [
    ("unclosed-bracket", "encoders: [avg]", "encoders: [avg", None, "malformed YAML"),
    ("bad-indentation", "  test: {", "   test: {", None, "malformed YAML"),
    ("duplicate-key", "seed: 1\n", "seed: 1\nseed: 2\n", "seed", "duplicate key 'seed'"),
    ("unknown-top-level-key", "seed: 1\n", "seed: 1\ncolour: red\n", "colour", "expected one of"),
    ("wrong-type", "seed: 1", 'seed: "x"', "seed", "valid integer"),
    ("negative-seed", "seed: 1", "seed: -5", "seed", "greater than or equal to 0"),
    ("bad-device", "device: cpu", "device: gpu", "device", "'gpu'"),
    ("source-both", "{generate: quickstart, sentences: 50}",
     "{generate: quickstart, sentences: 50, path: a.txt}", "corpus.train", "exactly one of"),
    ("unknown-encoder", "encoders: [avg]", "encoders: [avgg]", "encoders.0.name",
     "did you mean 'avg'?"),
    ("unknown-option", "hidden: 8,", "hiden: 8,", "decoders.0.hiden", "hidden"),
    ("wrong-option-type", "hidden: 8,", "hidden: big,", "decoders.0.hidden", "'big'"),
    ("missing-corpus-file", "{generate: quickstart, sentences: 50}", "{path: missing.txt}",
     "corpus.train.path", "file not found"),
]


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    """`harness` points logging at the CliRunner's stderr; put the handlers back afterwards."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    harness_level = logging.getLogger("harness").level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    logging.getLogger("harness").setLevel(harness_level)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache root that must stay absent; the cwd is an empty folder (default --out is runs/)."""
    root = tmp_path / "cache"
    monkeypatch.setenv("HARNESS_CACHE", str(root))
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    return root


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def write_spec(folder: Path, text: str) -> Path:
    path = folder / "spec.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def bad_spec(folder: Path, old: str, new: str) -> tuple[Path, int]:
    """Write GOOD with `old` replaced; return the path and the line of the last line of `new`."""
    assert GOOD.count(old) == 1
    text = GOOD.replace(old, new)
    marker = new.strip("\n").splitlines()[-1]
    hits = [n for n, row in enumerate(text.splitlines(), 1) if marker in row]
    assert len(hits) == 1, (marker, hits)
    return write_spec(folder, text), hits[0]


def assert_one_error_line(result: Result, *needles: str) -> str:
    """Exit 2, nothing on stdout, exactly one `error: ...` line on stderr, no traceback."""
    assert result.exit_code == 2, (result.output, result.exception)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert result.stderr == lines[0] + "\n"
    assert lines[0].startswith("error: ")
    assert "Traceback" not in result.output
    for needle in needles:
        assert needle in lines[0]
    return lines[0]


# --------------------------------------------------------------------------- validate

@pytest.mark.parametrize(("old", "new", "field", "needle"),
                         [case[1:] for case in BAD_SPECS], ids=[case[0] for case in BAD_SPECS])
def test_validate_bad_spec_prints_one_line(tmp_path: Path, old: str, new: str, field: str | None,
                                           needle: str) -> None:
    path, line = bad_spec(tmp_path, old, new)
    if field is None:  # malformed YAML: PyYAML may notice on the line after the mistake
        message = assert_one_error_line(invoke("validate", str(path)), f"{path}:", needle)
        assert int(message.split(f"{path}:")[1].split(":")[0]) in (line, line + 1)
    else:
        message = assert_one_error_line(invoke("validate", str(path)), f"{path}:{line}: {field}: ",
                                        needle)
        assert message.startswith(f"error: {path}:{line}: {field}: ")


def test_validate_non_mapping_document(tmp_path: Path) -> None:
    path = write_spec(tmp_path, "- just\n- a list\n")
    assert_one_error_line(invoke("validate", str(path)), f"{path}:1: ", "YAML mapping")


def test_validate_missing_spec_file(tmp_path: Path) -> None:
    assert_one_error_line(invoke("validate", str(tmp_path / "nope.yaml")),
                          f"{tmp_path / 'nope.yaml'}: spec file not found")


def test_validate_bad_set(tmp_path: Path) -> None:
    path = write_spec(tmp_path, GOOD)
    assert_one_error_line(invoke("validate", str(path), "--set", "vocab.dim"), "--set", "KEY.PATH=VALUE")
    assert_one_error_line(invoke("validate", str(path), "--set", "vocab.colour=1"),
                          "error: --set: vocab.colour: unknown key")
    assert_one_error_line(invoke("validate", str(path), "--set", "decoders.0.hidden=big"),
                          "error: --set: decoders.0.hidden: ", "'big'")


def test_validate_good_spec_and_set(tmp_path: Path) -> None:
    path = write_spec(tmp_path, GOOD)
    result = invoke("validate", str(path), "--set", "decoders.0.hidden=16")
    assert result.exit_code == 0, result.output
    assert result.stdout == (f"{path}: ok (1 encoder, 1 decoder to train, 1 metric, "
                             "0 downstream tasks)\n")
    assert result.stderr == ""


def test_validate_quickstart(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    result = invoke("validate", "benchmarks/quickstart.yaml")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("benchmarks/quickstart.yaml: ok (")
    assert result.stderr == ""


def test_debug_lets_the_exception_propagate(tmp_path: Path) -> None:
    path, line = bad_spec(tmp_path, "seed: 1", 'seed: "x"')
    result = invoke("validate", str(path), "--debug")
    assert isinstance(result.exception, SpecError)
    assert (result.exception.file, result.exception.line, result.exception.field) == (
        str(path), line, "seed")
    assert result.exit_code == 1
    assert "error: " not in result.stderr


# --------------------------------------------------------------------------- run

def assert_nothing_written(cache: Path, *paths: Path) -> None:
    assert not cache.exists()
    assert list(Path.cwd().iterdir()) == []  # no default runs/<name>
    for path in paths:
        assert not path.exists()


@pytest.mark.parametrize(("old", "new", "field", "needle"),
                         [case[1:] for case in BAD_SPECS], ids=[case[0] for case in BAD_SPECS])
def test_run_bad_spec_writes_nothing(tmp_path: Path, cache: Path, old: str, new: str,
                                     field: str | None, needle: str) -> None:
    path, line = bad_spec(tmp_path, old, new)
    out = tmp_path / "out"
    result = invoke("run", str(path), "--out", str(out))
    assert_one_error_line(result, f"{path}:", needle, *([f":{line}: {field}: "] if field else []))
    assert_nothing_written(cache, out)


def test_run_bad_spec_without_out_writes_nothing(tmp_path: Path, cache: Path) -> None:
    path, _ = bad_spec(tmp_path, "seed: 1", 'seed: "x"')
    assert_one_error_line(invoke("run", str(path)), "seed")
    assert_nothing_written(cache)


def test_run_missing_corpus_file(tmp_path: Path, cache: Path) -> None:
    path, line = bad_spec(tmp_path, "{generate: quickstart, sentences: 50}", "{path: data/train.txt}")
    out = tmp_path / "out"
    message = assert_one_error_line(invoke("run", str(path), "--out", str(out)),
                                    f"{path}:{line}: corpus.train.path: file not found: ")
    assert message.endswith(str(tmp_path.resolve() / "data" / "train.txt"))
    assert_nothing_written(cache, out)


def test_run_missing_corpus_file_given_with_set(tmp_path: Path, cache: Path) -> None:
    path = write_spec(tmp_path, GOOD)
    out = tmp_path / "out"
    result = invoke("run", str(path), "--out", str(out), "--set", "corpus.test={path: held.txt}")
    assert_one_error_line(result, "error: --set: corpus.test.path: file not found: ",
                          str(Path.cwd() / "held.txt"))
    assert_nothing_written(cache, out)


@pytest.mark.parametrize(("args", "needle"), [
    (("--set", "encoders=[avg, no-such-encoder]"), "encoders.1.name: unknown encoder 'no-such-encoder'"),
    (("--set", "decoders.0.name=mos-lstmm"),
     "unknown decoder 'mos-lstmm': did you mean 'mos-lstm' or 'simple-lstm'?"),
    (("--set", "metrics=[idd]"), "metrics.0.name: unknown metric 'idd'"),
])
def test_run_unknown_component_name(tmp_path: Path, cache: Path, args: tuple[str, ...],
                                    needle: str) -> None:
    path = write_spec(tmp_path, GOOD)
    out = tmp_path / "out"
    assert_one_error_line(invoke("run", str(path), "--out", str(out), *args), needle, "harness list")
    assert_nothing_written(cache, out)


@pytest.mark.parametrize(("override", "message"), [
    # a misspelt list or key: did you mean
    ("decoder.0.hidden=32", "error: --set: decoder.0.hidden: 'decoder.0.hidden=32': the spec has "
                            "no list decoder; did you mean 'decoders'?"),
    ("generaton.beam=3", "error: --set: generaton: unknown key; did you mean 'generation'? "
                         "expected one of: name, seed, device, corpus, "),
    # an index past the end: how long the list is
    ("decoders.5.hidden=32", "error: --set: decoders.5: 'decoders.5.hidden=32': decoders has 1 "
                             "entry (0 to 0), so 5 names none of them"),
    ("metrics.3=bleu", "error: --set: metrics.3: 'metrics.3=bleu': metrics has 1 entry (0 to 0), "
                       "so 3 names none of them"),
    ("vocab.dim.size=3", "error: --set: vocab.dim.size: 'vocab.dim.size=3': vocab.dim is a single "
                         "value (8), with no 'size' inside"),
    # a boolean where a number belongs, in a spec section and in a component's options
    ("generation.beam=true", "error: --set: generation.beam: expected a number, got true"),
    ("decoders.0.hidden=false", "error: --set: decoders.0.hidden: expected a number, got false"),
    # no internal class names
    ("generation=3", "error: --set: generation: expected a mapping of settings (got 3)"),
    # unbalanced YAML: where it breaks, nothing echoed back as an example
    ("encoders=[avg", "error: --set: encoders: 'encoders=[avg': the value is not valid YAML at "
                      "column 5: expected ',' or ']', but got '<stream end>'"),
])
def test_set_errors_say_what_to_write(tmp_path: Path, override: str, message: str) -> None:
    path = write_spec(tmp_path, GOOD)
    line = assert_one_error_line(invoke("validate", str(path), "--set", override))
    assert line.startswith(message), line
    assert "Section" not in line and "instance of" not in line


def test_set_null_resets_a_section_to_its_default(tmp_path: Path) -> None:
    spec = GOOD + "downstream: {tasks: [syn-order]}\ncurve: {train_sizes: [20]}\n"
    path = write_spec(tmp_path, spec)
    assert "1 downstream task" in invoke("validate", str(path)).stdout
    result = invoke("validate", str(path), "--set", "downstream=null", "--set", "curve=null")
    assert result.exit_code == 0 and "0 downstream tasks" in result.stdout


def test_run_unknown_device(tmp_path: Path, cache: Path) -> None:
    path = write_spec(tmp_path, GOOD)
    out = tmp_path / "out"
    assert_one_error_line(invoke("run", str(path), "--out", str(out), "--device", "gpu"),
                          "device", "'gpu'")
    assert_nothing_written(cache, out)


def test_run_bad_spec_leaves_an_explicit_cache_alone(tmp_path: Path, cache: Path) -> None:
    path, _ = bad_spec(tmp_path, "encoders: [avg]", "encoders: [avgg]")
    explicit = tmp_path / "explicit-cache"
    out = tmp_path / "out"
    assert_one_error_line(invoke("run", str(path), "--out", str(out), "--cache", str(explicit)),
                          "did you mean 'avg'?")
    assert_nothing_written(cache, out, explicit)


# --------------------------------------------------------------------------- report, help

def test_report_without_results(tmp_path: Path) -> None:
    assert_one_error_line(invoke("report", str(tmp_path)),
                          f"error: {tmp_path / 'results.json'}: not found")
    assert list(tmp_path.iterdir()) == []


def test_report_of_a_missing_directory(tmp_path: Path) -> None:
    assert_one_error_line(invoke("report", str(tmp_path / "absent")), "results.json")
    assert not (tmp_path / "absent").exists()


def test_help() -> None:
    result = invoke("--help")
    assert result.exit_code == 0
    for command in ("list", "validate", "run", "report", "compare", "generate", "analogy", "data"):
        assert command in result.stdout
    assert "--out" in result.stdout

    result = invoke("run", "--help")
    assert result.exit_code == 0
    for option in ("--set", "--out", "--device", "--cache", "--debug", "--verbose"):
        assert option in result.stdout

    result = invoke("validate", "--help")
    assert result.exit_code == 0
    assert "--set" in result.stdout and "--debug" in result.stdout


# --------------------------------------------------------------------------- real process

def harness_command() -> list[str]:
    script = Path(sys.executable).with_name("harness")
    if script.exists():
        return [str(script)]
    found = shutil.which("harness")
    return [found] if found else [sys.executable, "-m", "harness.cli"]


def run_harness(*args: str, cwd: Path, env: dict[str, str] | None = None
                ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*harness_command(), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=60, env={**os.environ, **(env or {})}, check=False)


def test_subprocess_bad_spec(tmp_path: Path) -> None:
    path, line = bad_spec(tmp_path, "hidden: 8,", "hiden: 8,")
    cache, out = tmp_path / "cache", tmp_path / "out"
    for command in (["validate"], ["run", "--out", str(out)]):
        done = run_harness(*command, str(path), cwd=tmp_path, env={"HARNESS_CACHE": str(cache)})
        assert done.returncode == 2
        assert done.stdout == ""
        assert done.stderr.count("\n") == 1 and done.stderr.endswith("\n")
        assert done.stderr.startswith(f"error: {path}:{line}: decoders.0.hiden: unknown key; ")
        assert "Traceback" not in done.stderr
    assert not cache.exists() and not out.exists()

    debug = run_harness("validate", str(path), "--debug", cwd=tmp_path)
    assert debug.returncode == 1
    assert "Traceback (most recent call last)" in debug.stderr
    assert f"SpecError: {path}:{line}: decoders.0.hiden" in debug.stderr


def test_subprocess_quickstart_validates() -> None:
    done = run_harness("validate", "benchmarks/quickstart.yaml", cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("benchmarks/quickstart.yaml: ok (")


def test_validate_lists_every_problem_and_exits_2(tmp_path: Path, cache: Path) -> None:
    """A well-formed spec that cannot run here: every problem, then one error line."""
    (tmp_path / "senteval").mkdir()
    text = GOOD.replace("encoders: [avg]", "encoders: [avg, {name: infersent, weights: none.pkl}]")
    text += f"downstream: {{tasks: [MR, TREC], data_dir: {tmp_path / 'senteval'}}}\n"
    path = write_spec(tmp_path, text)
    result = invoke("validate", str(path))
    assert result.exit_code == 2 and result.stdout == ""
    lines = result.stderr.splitlines()
    assert [line.split(":")[0] for line in lines] == ["problem"] * 3 + ["error"]
    assert "encoder 'infersent' is unavailable" in lines[0]
    assert "task MR needs" in lines[1] and "task TREC needs" in lines[2]
    assert lines[3] == (f"error: {path}: well formed, but `harness run` refuses it here until "
                        "these 3 problems are fixed")
    refused = invoke("run", str(path))
    assert refused.exit_code == 2 and "infersent' is unavailable" in refused.stderr
    assert not cache.exists() and not Path("runs").exists()


def test_run_refuses_an_out_that_is_a_file(tmp_path: Path, cache: Path) -> None:
    path = write_spec(tmp_path, GOOD)
    taken = tmp_path / "results.txt"
    taken.write_text("mine\n")
    assert_one_error_line(invoke("run", str(path), "--out", str(taken)),
                          f"--out {taken}: exists and is not a directory")
    assert taken.read_text() == "mine\n" and not cache.exists()


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_run_refuses_a_device_this_machine_lacks(tmp_path: Path, cache: Path) -> None:
    path = write_spec(tmp_path, GOOD)
    # The advice names an option both `run` and `validate` have.
    assert_one_error_line(invoke("run", str(path), "--device", "cuda"),
                          "device: 'cuda': this machine has 0 CUDA devices", "--set device=cpu")
    assert not cache.exists() and not Path("runs").exists()
    refused = invoke("validate", str(path), "--set", "device=cuda:3")
    assert refused.exit_code == 2
    assert refused.stderr.startswith("problem: --set: device: 'cuda:3': this machine has 0 CUDA")
    assert "--set device=cpu" in refused.stderr


# --------------------------------------------------------------------------- the cache's storage

def test_a_cache_that_is_a_file_is_one_line_before_any_work(tmp_path: Path, cache: Path) -> None:
    path = write_spec(tmp_path, GOOD)
    cache.write_text("not a directory\n")
    assert_one_error_line(invoke("run", str(path), "--cache", str(cache)),
                          f"cache {cache}: it is a file, not a directory", "--cache DIR")
    assert cache.read_text() == "not a directory\n" and not Path("runs").exists()


def test_a_read_only_cache_is_one_line_before_any_work(tmp_path: Path, cache: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A read-only mount (EROFS) cannot be made as root in a test: injected at the write."""
    import errno

    path = write_spec(tmp_path, GOOD)
    real = Path.write_bytes

    def read_only(self: Path, data: bytes) -> int:
        if self.parent == cache:
            raise OSError(errno.EROFS, "Read-only file system", str(self))
        return real(self, data)

    monkeypatch.setattr(Path, "write_bytes", read_only)
    assert_one_error_line(invoke("run", str(path)),
                          f"cache {cache}: the file system is read-only")
    assert not Path("runs").exists()


def test_a_full_disk_mid_write_is_one_line_and_leaves_no_finished_artifact(
        tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ENOSPC while the training vectors are written: one line naming the cache, exit 2, the
    artifact left partial (never taken as finished); the rerun completes it."""
    import errno

    import harness.util.vectors

    path = write_spec(tmp_path, GOOD)
    real = harness.util.vectors.write_rows
    calls = []

    def disk_full(*args: object) -> None:
        calls.append(1)
        if len(calls) == 1:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(harness.util.vectors, "write_rows", disk_full)
    failed = invoke("run", str(path))
    assert failed.exit_code == 2 and "Traceback" not in failed.output
    # the stages' progress lines, then one error line
    assert failed.stderr.splitlines()[-1].startswith(f"error: cache {cache}: the disk is full")
    assert "a rerun resumes" in failed.stderr.splitlines()[-1]
    encoded = sorted(p.name for p in (cache / "encode").iterdir())
    assert len(encoded) == 1 and encoded[0].endswith(".partial")
    assert not Path("runs").exists()
    monkeypatch.setattr(harness.util.vectors, "write_rows", real)
    done = invoke("run", str(path))
    assert done.exit_code == 0, done.output
    assert all(not p.name.endswith(".partial") for p in (cache / "encode").iterdir())


def test_ray_without_ray_installed_is_one_line(tmp_path: Path, cache: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    assert_one_error_line(invoke("run", str(write_spec(tmp_path, GOOD)), "--executor", "ray"),
                          "--set: executor.name: executor 'ray' is unavailable: needs Ray",
                          'pip install "v2s-harness[ray]"')
    assert not cache.exists()
