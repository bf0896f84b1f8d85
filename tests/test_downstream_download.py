"""`harness data senteval` offline: a local HTTP server serves small archives built here."""

from __future__ import annotations

import hashlib
import io
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.data import fetch as fetching
from harness.data.fetch import Partial, TransientError, fetch, retrying
from harness.errors import DataError, HarnessError
from harness_plugins.tasks.senteval import download, prepare
from harness_plugins.tasks.senteval.download import download_senteval
from harness_plugins.tasks.senteval.loaders import load_task
from tests.range_server import FileServer, serving

STS = {"STS12": ("test-gold", ("MSRpar", "MSRvid", "SMTeuroparl", "surprise.OnWN",
                               "surprise.SMTnews")),
       "STS13": ("test-gs", ("FNWN", "headlines", "OnWN")),
       "STS14": ("sts-en-test-gs-2014", ("deft-forum", "deft-news", "headlines", "images",
                                         "OnWN", "tweet-news")),
       "STS15": ("test_evaluation_task2a", ("answers-forums", "answers-students", "belief",
                                            "headlines", "images")),
       "STS16": ("sts2016-english-with-gs-v1.0", ("answer-answer", "headlines", "plagiarism",
                                                   "postediting", "question-question"))}


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as bundle:
        for name, data in files.items():
            bundle.writestr(name, data)
    return buffer.getvalue()


def _tar_gz(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as bundle:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            bundle.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _lines(n: int, template: str) -> bytes:
    return "".join(template.format(i=i) + "\n" for i in range(n)).encode("utf-8")


def build_sources() -> tuple[dict[str, bytes], dict[str, int], dict[str, tuple]]:
    """Return (URL path -> bytes served, expected lines per prepared file, expected totals)."""
    served: dict[str, bytes] = {}
    lines: dict[str, int] = {}
    for split, n in (("train", 6), ("dev", 3), ("test", 4)):
        served[f"/SSTbin/sentiment-{split}"] = _lines(n, "a film {i} .\t1")
        served[f"/SSTfine/stsa.fine.{split}"] = _lines(n, "4 a film {i} .")
        lines[f"SST/binary/sentiment-{split}"] = lines[f"SST/fine/sentiment-{split}"] = n
    for year, (inside, subsets) in STS.items():
        files = {"readme.txt": b"not part of the data\n"}
        prefix = "STS2016" if year == "STS16" else "STS"
        for subset in subsets:
            files[f"{inside}/{prefix}.input.{subset}.txt"] = _lines(
                3, "A Dog runs {i}.\tThe dog's bed {i}!")
            files[f"{inside}/{prefix}.gs.{subset}.txt"] = b"4.2\n\n1.0\n"
            for kind in ("input", "gs"):
                lines[f"STS/{year}-en-test/STS.{kind}.{subset}.txt"] = 3
        archive = {"STS12": "4/40/STS2012", "STS13": "2/2f/STS2013", "STS14": "8/8c/STS2014",
                   "STS15": "d/da/STS2015", "STS16": "9/98/STS2016"}[year].split("/")[-1]
        served[f"/{year}/{archive}-en-test.zip"] = _zip(files)
    stsb = {f"stsbenchmark/sts-{split}.csv":
            _lines(n, "main-captions\tMSRvid\t2012test\t{i:04d}\t3.000\tA Man Plays {i}.\t"
                      "A person plays.\textra\tfields")
            for split, n in (("train", 5), ("dev", 3), ("test", 2))}
    served["/STSBenchmark/Stsbenchmark.tar.gz"] = _tar_gz(
        {**stsb, "stsbenchmark/readme.txt": b"about\n"})
    lines.update({"STS/STSBenchmark/sts-train.csv": 5, "STS/STSBenchmark/sts-dev.csv": 3,
                  "STS/STSBenchmark/sts-test.csv": 2})
    served["/TREC/train_5500.label"] = _lines(7, "DESC:def What 's `the` thing {i} ?")
    served["/TREC/TREC_10.label"] = _lines(3, "NUM:count How many {i} ?")
    lines.update({"TREC/train_5500.label": 7, "TREC/TREC_10.label": 3})
    header = b"pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment"
    for split, n, end in (("train", 4, b"\n"), ("trial", 2, b"\n"), ("test_annotated", 3, b"\r\n")):
        rows = [header] + [f"{i}\tA man's hat {i}.\tA Hat!\t4.5\tNEUTRAL".encode() for i in range(n)]
        served[f"/SICK/sick_{split}.zip"] = _zip(
            {f"SICK_{split}.txt": b"".join(row + end for row in rows), "readme.txt": b"x\n"})
        lines[f"SICK/SICK_{split}.txt"] = n + 1
    binary = {"data/rt10662/rt-polarity.pos": b"It's a \x85 gem.\nFine (really) film!\n",
              "data/rt10662/rt-polarity.neg": b"dull.\n",
              "data/customerr/custrev.pos": b"good\n\n", "data/customerr/custrev.neg": b"bad\n",
              "data/subj/subj.subjective": b"i think so\n",
              "data/subj/subj.objective": b"it is so\n",
              "data/mpqa/mpqa.pos": b"fine\n", "data/mpqa/mpqa.neg": b"poor\n"}
    served["/BINCLASSIF/datasmall_NB_ACL12.zip"] = _zip(binary)
    totals = {"MR": (("MR/rt-polarity.pos", "MR/rt-polarity.neg"), 3),
              "CR": (("CR/custrev.pos", "CR/custrev.neg"), 3),
              "SUBJ": (("SUBJ/subj.objective", "SUBJ/subj.subjective"), 2),
              "MPQA": (("MPQA/mpqa.pos", "MPQA/mpqa.neg"), 2)}
    mrpc_header = b"Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\r\n"
    for split, n in (("train", 4), ("test", 2)):
        served[f"/MRPC/msr_paraphrase_{split}.txt"] = mrpc_header + b"".join(
            f"{i % 2}\t{i}\t{i + 9}\tHe said {i}.\tHe stated {i}.\r\n".encode() for i in range(n))
        lines[f"MRPC/msr_paraphrase_{split}.txt"] = n + 1
    return served, lines, totals


@pytest.fixture(autouse=True)
def naps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The back-off waits asked for; no test sleeps for real."""
    waits: list[float] = []
    monkeypatch.setattr(fetching, "sleep", waits.append)
    return waits


def _etag(data: bytes) -> str:
    """Return the ETag the test server gives `data`."""
    return f'"{hashlib.sha256(data).hexdigest()[:16]}"'


def urls(server: FileServer) -> dict[str, str]:
    """Every source's base URL on the test server."""
    return {source: server.url(f"/{source}") for source in download.SOURCES}


@pytest.fixture()
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FileServer]:
    served, lines, totals = build_sources()
    monkeypatch.setattr(download, "LINES", lines)
    monkeypatch.setattr(download, "TOTALS", totals)
    with serving(served) as httpd:
        yield httpd


def _run(server: FileServer, directory: Path, tasks=None) -> download.Report:
    return download_senteval(directory, tasks=tasks, base_urls=urls(server), progress=False)


def test_everything_is_prepared_as_the_script_does(server: FileServer, tmp_path: Path) -> None:
    root = tmp_path / "downstream"
    report = _run(server, root)
    assert report.ok, report.summary()
    assert {g.status for g in report.groups} == {"downloaded"}
    assert (root / "MR" / "rt-polarity.pos").read_bytes() == (
        b"It 's a M-^E gem . \nFine ( really ) film ! \n")  # cat -v | sed -f tokenizer.sed
    assert (root / "TREC" / "train_5500.label").read_text().split("\n")[0] == (
        "DESC:def What s the thing 0 ?")  # quotes and backquotes removed
    sts = (root / "STS" / "STS16-en-test" / "STS.input.headlines.txt").read_text()
    assert sts.split("\n")[0] == "a dog runs 0 .\tthe dog 's bed 0 !"  # Moses + lower-case
    assert (root / "STS" / "STS16-en-test" / "STS.gs.headlines.txt").exists()  # renamed
    sick = (root / "SICK" / "SICK_test_annotated.txt").read_bytes().split(b"\n")
    assert sick[0].startswith(b"pair_ID\t") and sick[1] == b"0\tA man 's hat 0 .\tA Hat !\t4.5\tNEUTRAL\r"
    stsb = (root / "STS" / "STSBenchmark" / "sts-dev.csv").read_text().split("\n")[0]
    assert stsb == "main-captions\tMSRvid\t2012test\t0000\t3.000\ta man plays 0 .\ta person plays ."
    assert load_task("STS15", root).sizes()["belief"] == 2  # the empty gold line is unscored
    assert load_task("MRPC", root).sizes() == {"train": 4, "test": 2}
    assert not (root / ".downloads").exists() and not (root / ".tools").exists()
    requests = len(server.log)
    again = _run(server, root)
    assert again.ok and {g.status for g in again.groups} == {"present"}
    assert len(server.log) == requests  # nothing downloaded twice


def test_empty_download_is_reported(server: FileServer, tmp_path: Path) -> None:
    server.files["/SSTbin/sentiment-dev"] = b""
    report = _run(server, tmp_path, tasks=["SST2", "TREC"])
    assert not report.ok
    status = {group.name: group.status for group in report.groups}
    assert status == {"SST": "failed", "TREC": "downloaded"}
    [problem, *_] = report.problems()
    assert "SSTbin/sentiment-dev: the server sent an empty file" in problem


def test_wrong_line_count_is_reported_and_redownloaded(server: FileServer, tmp_path: Path) -> None:
    good = server.files["/TREC/TREC_10.label"]
    server.files["/TREC/TREC_10.label"] = good.split(b"\n", 1)[0] + b"\n"
    report = _run(server, tmp_path, tasks=["trec"])
    assert report.problems() == [f"{tmp_path}/TREC/TREC_10.label: 1 lines, expected 3"]
    server.files["/TREC/TREC_10.label"] = good
    assert _run(server, tmp_path, tasks=["TREC"]).ok
    assert load_task("TREC", tmp_path).sizes() == {"train": 7, "test": 3}


def test_interrupted_download_resumes_with_a_range_request(server: FileServer, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fetching, "ATTEMPTS", 1)  # no retries: the next run resumes
    path = "/MRPC/msr_paraphrase_train.txt"
    server.cut[path] = len(server.files[path]) // 2
    first = _run(server, tmp_path, tasks=["MRPC"])
    assert not first.ok and "transfer interrupted" in first.problems()[0]
    url = urls(server)["MRPC"] + "/msr_paraphrase_train.txt"
    part = Partial.in_folder(tmp_path / ".downloads" / "MRPC", url, "msr_paraphrase_train.txt")
    size = len(server.files[path])
    assert part.path.stat().st_size == size // 2
    assert part.resumable() == (size // 2, _etag(server.files[path]))
    assert _run(server, tmp_path, tasks=["MRPC"]).ok
    index = server.log.index((path, f"bytes={size // 2}-"))
    assert server.headers[index]["If-Range"] == _etag(server.files[path])
    assert (tmp_path / "MRPC" / "msr_paraphrase_train.txt").read_bytes() == server.files[path]


def _cut_once(server: FileServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
              path: str = "/MRPC/msr_paraphrase_test.txt") -> tuple[str, Path, Partial]:
    """Leave a half download of `path` (one try, cut): return its URL, destination, partial."""
    url, target = server.url(path), tmp_path / "file.txt"
    server.cut[path] = len(server.files[path]) // 2
    with monkeypatch.context() as patch:
        patch.setattr(fetching, "ATTEMPTS", 1)
        with pytest.raises(DataError, match="transfer interrupted.*run again to resume"):
            fetch(url, target)
    return url, target, Partial.in_folder(tmp_path, url, "file.txt")


def test_a_cut_transfer_is_retried_in_the_same_run(server: FileServer, tmp_path: Path,
                                                   naps: list[float]) -> None:
    path = "/MRPC/msr_paraphrase_test.txt"
    data = server.files[path]
    server.cut[path] = len(data) // 2
    fetch(server.url(path), tmp_path / "file.txt")
    assert (tmp_path / "file.txt").read_bytes() == data
    assert server.asked() == [None, f"bytes={len(data) // 2}-"]
    assert server.headers[1]["If-Range"] == _etag(data)
    assert len(naps) == 1 and 1 <= naps[0] <= 1.25
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt"]  # no .part, no record


def test_a_503_is_retried_and_a_404_is_not(server: FileServer, tmp_path: Path,
                                           naps: list[float]) -> None:
    path = "/TREC/TREC_10.label"
    server.fail[path] = [503]
    fetch(server.url(path), tmp_path / "trec.label")
    assert (tmp_path / "trec.label").read_bytes() == server.files[path]
    assert len(server.log) == 2 and len(naps) == 1
    server.fail[path] = [404]
    with pytest.raises(DataError, match=r"TREC_10\.label: HTTP 404.*pass another base URL"):
        fetch(server.url(path), tmp_path / "again.label")
    assert len(server.log) == 3 and len(naps) == 1  # one request, no wait
    server.fail[path] = [503] * 4
    with pytest.raises(DataError, match=r"HTTP 503 .* \(4 tries\); the server is busy"):
        fetch(server.url(path), tmp_path / "again.label")
    assert len(server.log) == 7 and len(naps) == 4


def test_a_file_changed_upstream_replaces_the_partial_one(server: FileServer, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    url, target, part = _cut_once(server, tmp_path, monkeypatch)
    old = server.files["/MRPC/msr_paraphrase_test.txt"]
    new = server.files["/MRPC/msr_paraphrase_test.txt"] = b"a new version\n" * 40
    fetch(url, target)
    assert server.log[-1][1] == f"bytes={len(old) // 2}-"
    assert server.headers[-1]["If-Range"] == _etag(old)  # stale: answered 200 with all of it
    assert target.read_bytes() == new and not part.path.exists()


def test_a_server_ignoring_if_range_does_not_splice_a_changed_file(
        server: FileServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url, target, part = _cut_once(server, tmp_path, monkeypatch)
    old = server.files["/MRPC/msr_paraphrase_test.txt"]
    new = server.files["/MRPC/msr_paraphrase_test.txt"] = b"a new version\n" * 40
    server.if_range = False  # it answers 206 with the new file's tail
    fetch(url, target)
    # The 206 carried another ETag: refused, and the file fetched again from byte 0.
    assert [requested for _, requested in server.log[-2:]] == [f"bytes={len(old) // 2}-", None]
    assert target.read_bytes() == new and not part.path.exists()


def test_server_without_range_support_restarts(server: FileServer, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    url, target, part = _cut_once(server, tmp_path, monkeypatch)
    held = part.path.stat().st_size
    server.ranges = False
    fetch(url, target)
    assert target.read_bytes() == server.files["/MRPC/msr_paraphrase_test.txt"]
    assert server.log[-1][1] == f"bytes={held}-"  # asked to resume, got the whole file
    assert not part.path.exists() and not part.record.exists()


def test_a_partial_file_without_a_validator_starts_over(server: FileServer, tmp_path: Path) -> None:
    url = server.url("/MRPC/msr_paraphrase_test.txt")
    part = Partial.in_folder(tmp_path, url, "file.txt")
    part.path.write_bytes(b"stale partial bytes")  # e.g. left by an older harness: no record
    fetch(url, tmp_path / "file.txt")
    assert (tmp_path / "file.txt").read_bytes() == server.files["/MRPC/msr_paraphrase_test.txt"]
    assert server.asked() == [None]  # no Range: nothing says the bytes are this file's


def test_two_urls_with_one_file_name_keep_separate_partial_files(
        server: FileServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server.files["/mirror/msr_paraphrase_test.txt"] = other = b"the mirror's copy\n" * 30
    url, target, part = _cut_once(server, tmp_path, monkeypatch)
    url2, _, part2 = _cut_once(server, tmp_path, monkeypatch, "/mirror/msr_paraphrase_test.txt")
    assert url2 != url and part2.path != part.path
    assert part.path.stat().st_size and part2.path.stat().st_size == len(other) // 2
    fetch(url2, target)
    assert target.read_bytes() == other  # not the first URL's half plus the mirror's rest
    assert server.log[-1] == ("/mirror/msr_paraphrase_test.txt", f"bytes={len(other) // 2}-")
    assert part.path.exists() and not part2.path.exists()


def test_retrying_backs_off_1_2_4_seconds_and_passes_other_errors(naps: list[float]) -> None:
    calls: list[int] = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 4:
            raise TransientError("x: cut", "run again")
        return "done"

    assert retrying(flaky) == "done" and len(calls) == 4
    assert len(naps) == 3 and all(base <= n <= base * 1.25 for base, n in zip([1, 2, 4], naps))

    def always_cut() -> None:
        raise TransientError("x: cut", "run again")

    with pytest.raises(DataError, match=r"^x: cut \(2 tries\); run again$"):
        retrying(always_cut, attempts=2)
    assert len(naps) == 4

    def broken() -> None:
        calls.append(1)
        raise DataError("y: HTTP 404 Not Found; pass another base URL")

    calls.clear()
    with pytest.raises(DataError, match="404"):
        retrying(broken)
    assert len(calls) == 1


def test_http_error_names_the_url(server: FileServer, tmp_path: Path) -> None:
    url = urls(server)["TREC"] + "/nothing.label"
    with pytest.raises(DataError, match=r"nothing\.label: HTTP 404"):
        fetch(url, tmp_path / "nothing.label")
    assert len(server.log) == 1


def test_sts_needs_no_perl_and_no_moses_download(server: FileServer, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(download.shutil, "which", lambda name: None)  # as if no perl installed
    report = _run(server, tmp_path, tasks=["STS13"])
    assert report.ok, report.summary()
    assert [path for path, _ in server.log] == ["/STS13/STS2013-en-test.zip"]  # nothing else
    line = (tmp_path / "STS" / "STS13-en-test" / "STS.input.FNWN.txt").read_text().split("\n")[1]
    assert line == "a dog runs 1 .\tthe dog 's bed 1 !"  # Moses-tokenized, lower-cased


def test_default_addresses_are_the_scripts(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    requested: list[str] = []

    def offline(url: str, target: Path, *, progress: bool = True) -> Path:
        requested.append(url)
        raise DataError(f"{url}: not fetched in tests")

    monkeypatch.setattr(prepare, "fetch", offline)
    report = download_senteval(tmp_path, tasks=["SST2", "STS12", "STSB", "TREC", "SICK-R", "MR",
                                                "MRPC"], progress=False)
    assert not report.ok
    assert requested == [  # each group's first file, at get_transfer_data.bash's addresses
        "https://raw.githubusercontent.com/PrincetonML/SIF/master/data/sentiment-train",
        "http://ixa2.si.ehu.es/stswiki/images/4/40/STS2012-en-test.zip",
        "http://ixa2.si.ehu.es/stswiki/images/4/48/Stsbenchmark.tar.gz",
        "http://cogcomp.cs.illinois.edu/Data/QA/QC/train_5500.label",
        "http://alt.qcri.org/semeval2014/task1/data/uploads/sick_train.zip",
        "https://dl.fbaipublicfiles.com/senteval/senteval_data/datasmall_NB_ACL12.zip",
        "https://dl.fbaipublicfiles.com/senteval/senteval_data/msr_paraphrase_train.txt",
    ]


def test_unknown_task_is_refused(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match="unknown SentEval task.*SNLI"):
        download_senteval(tmp_path, tasks=["SNLI"], progress=False)
