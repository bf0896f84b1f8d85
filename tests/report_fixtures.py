"""A results.json by hand with every field the report renders: seeds, support (two diagnostics
under min_support), decoders still improving, rankings, downstream scores from both origins and
a missing encoder, bootstrap intervals of rho, published tables. Its conclusions are known:

- on id-perm (the ranking diagnostic, decoder mos-lstm) 3 of 10 pairs differ significantly
  after Holm's correction: laser > avg, laser > gem, sbert > gem; the rank intervals follow;
- of 12 correlation tests 5 have p < 0.05 (0.6 expected by chance); 1 survives Holm (id-perm
  with MR, p 0.004, Holm-adjusted 0.048), 3 survive Benjamini-Hochberg; no other diagnostic's
  association survives;
- caveats: id-perm of gem (n=4) and of sbert (n=12) under min_support 30; laser / mos-lstm
  (one seed of three) and avg / simple-lstm still improving; 5 encoders; qt has no downstream
  scores.
"""

from __future__ import annotations

import copy
from typing import Any

from harness.results.model import SCHEMA, RunResults

ENCODERS = ["laser", "avg", "sbert", "hier", "gem"]
TASKS = ["MR", "CR", "STSB"]
ID = {"laser": 40.0, "avg": 15.2, "sbert": 3.3, "hier": 14.9, "gem": 1.2}
ID_PERM = {"laser": 96.5, "avg": 35.1, "sbert": 94.8, "hier": 86.6, "gem": 84.0}
PERMUTATIONS = {"laser": 207, "avg": 216, "sbert": 12, "hier": 86, "gem": 4}
BLEU = {"laser": 52.9, "avg": 33.5, "sbert": 21.5, "hier": 37.9, "gem": 23.8}
DOWNSTREAM = {"laser": {"MR": 80.0, "CR": 83.0, "STSB": 0.70},
              "avg": {"MR": 72.2, "CR": 74.5, "STSB": 0.57},
              "sbert": {"MR": 84.8, "CR": 90.8, "STSB": 0.75},
              "hier": {"MR": 68.3, "CR": 72.7, "STSB": 0.55},
              "gem": {"MR": 63.5, "CR": 72.6, "STSB": 0.47}}
P_VALUES = {"id-perm": [0.004, 0.008, 0.012], "id": [0.2, 0.04, 0.5],
            "bleu": [0.03, 0.6, 0.7], "perm": [0.9, 0.1, 0.3]}
P_HOLM = {"id-perm": [0.048, 0.088, 0.12], "id": [1.0, 0.32, 1.0], "bleu": [0.27, 1.0, 1.0],
          "perm": [1.0, 0.7, 1.0]}
"""Holm over the 12 p-values by hand: sorted, the k-th smallest times 12 - k + 1, running max."""
SIGNIFICANT = [("laser", "avg"), ("laser", "gem"), ("sbert", "gem")]


def curve(epochs: int, best: int, shift: float = 0.0) -> list[dict]:
    """Validation loss falling until `best`, rising after it."""
    return [{"epoch": e, "train_loss": 5.0 - 0.3 * e + shift,
             "val_loss": 5.2 - 0.3 * min(e, best) + 0.1 * max(0, e - best) + shift}
            for e in range(1, epochs + 1)]


def train(epochs: int, best: int, shift: float = 0.0) -> dict:
    return {"epochs": epochs, "best_epoch": best, "train_loss": 2.0, "val_loss": 2.4,
            "tokens_per_s": 5000.0, "curve": curve(epochs, best, shift)}


def score(value: float, support: int, interval: str, spread: float | None = None) -> dict:
    data: dict[str, Any] = {"value": value, "ci95": [value - 2.0, value + 2.0],
                            "support": support, "interval": interval}
    if spread is not None:
        data["seeds"] = {"n": 3, "values": [value - spread, value, value + spread],
                         "mean": value, "std": spread}
    return data


def mos_run(encoder: str) -> dict:
    metrics = {"id": score(ID[encoder], 500, "korn-graubard+seeds-t", 0.5),
               "id-perm": score(ID_PERM[encoder], PERMUTATIONS[encoder],
                                "korn-graubard+seeds-t", 1.5),
               "bleu": score(BLEU[encoder], 500, "cluster-bootstrap+seeds-t", 0.25)}
    for value in metrics.values():
        value["seed_variance"] = True
    if encoder == "gem":
        metrics["id-perm"]["undefined_resamples"] = 17
    seeds = [{"seed": seed, "metrics": metrics,
              "train": train(10, 10 if (encoder, seed) == ("laser", 2) else 7, 0.2 * seed)}
             for seed in (1, 2, 3)]
    return {"encoder": encoder, "decoder": "mos-lstm", "metrics": metrics,
            "train": seeds[0]["train"], "generate": {"sentences_per_s": 120.0}, "seeds": seeds}


RANK_INTERVALS = {"laser": [1, 3], "sbert": [1, 4], "hier": [1, 5], "gem": [3, 5],
                  "avg": [2, 5]}
"""From the significant pairs: 1 + encoders significantly better, 5 - those significantly
worse."""


def ranking() -> dict:
    order = sorted(ENCODERS, key=lambda e: -ID_PERM[e])
    encoders = {e: {"value": ID_PERM[e], "rank": r, "rank_ci95": RANK_INTERVALS[e]}
                for r, e in enumerate(order, start=1)}
    differences = []
    for i, a in enumerate(ENCODERS):
        for b in ENCODERS[i + 1:]:
            diff = ID_PERM[a] - ID_PERM[b]
            sig = (a, b) in SIGNIFICANT or (b, a) in SIGNIFICANT
            differences.append({"a": a, "b": b, "difference": diff,
                                "ci95": [diff - 5, diff + 5] if sig else [diff - 50, diff + 50],
                                "p": 0.001 if sig else 0.4, "test": "permutation",
                                "p_holm": 0.01 if sig else 1.0, "significant": sig})
    # laser over avg and gem, sbert over gem: no encoder above a cut beats every one below
    groups = dict.fromkeys(order, 1)
    return {"encoders": encoders, "groups": groups, "differences": differences, "resamples": 1000,
            "permutations": 9999, "correction": "holm", "sentences": 500, "seeds": True,
            "undefined_resamples": 17}


def cell(rho: float, p: float, p_holm: float, low: float, high: float) -> dict:
    return {"rho": rho, "p": p, "p_method": "exact", "p_holm": p_holm, "n": 5,
            "ci95": [low, high]}


def correlations() -> dict:
    rhos = {"id-perm": [0.9, 0.8, 0.7], "id": [0.5, 0.9, 0.1], "bleu": [-0.9, -0.3, -0.3],
            "perm": [0.1, 0.6, 0.4]}
    matrix = {d: {t: cell(r, p, h, max(-1.0, r - 0.3), min(1.0, r + 0.3))
                  for t, r, p, h in zip(TASKS, rhos[d], P_VALUES[d], P_HOLM[d])} for d in rhos}
    summary = {"id-perm": {"mean": 0.8, "min": 0.7, "tasks": 3, "mean_ci95": [0.5, 0.95]},
               "id": {"mean": 0.5, "min": 0.1, "tasks": 3, "mean_ci95": [-0.2, 0.8]},
               "bleu": {"mean": -0.5, "min": -0.9, "tasks": 3, "mean_ci95": [-0.9, -0.1]},
               "perm": {"mean": 0.37, "min": 0.1, "tasks": 3}}
    return {"method": "spearman", "decoder": "mos-lstm", "matrix": matrix, "summary": summary,
            "ranks": {"downstream": {"sbert": 1, "laser": 2, "avg": 3, "hier": 4, "gem": 5},
                      "id-perm": {e: r["rank"] for e, r in ranking()["encoders"].items()}},
            "rank_by": "id-perm", "interval": "fisher-z", "correction": "holm",
            "diagnostics": {"id": ID, "id-perm": ID_PERM, "bleu": BLEU,
                            "perm": {e: 40.0 - i * 5 for i, e in enumerate(ENCODERS)}},
            "notes": ["no downstream scores for: qt (weights not found)"]}


def rich_data() -> dict:
    """The results.json of the module docstring (a fresh copy: tests may change it)."""
    return copy.deepcopy(_rich_data())


def _rich_data() -> dict:
    simple = {"encoder": "avg", "decoder": "simple-lstm",
              "metrics": {"id": score(9.0, 500, "clopper-pearson"),
                          "id-perm": score(30.0, 150, "clopper-pearson"),
                          "bleu": score(30.0, 500, "bootstrap")},
              "train": train(10, 10), "generate": {"sentences_per_s": 150.0}}
    return {
        "schema": SCHEMA,
        "spec": {"name": "rich", "seed": 1,
                 "corpus": {"train": {"generate": "quickstart", "sentences": 20000},
                            "test": {"path": "/data/newscrawl.2008.txt", "limit": 500},
                            "max_tokens": 15, "normalise": {"lowercase": True,
                                                            "digits": "zero"}},
                 "vocab": {"bpe_size": 1000, "dim": 100, "epochs": 25},
                 "decoders": [{"name": "mos-lstm", "options": {"layers": 1, "hidden": 256},
                               "encoders": None, "seeds": 3},
                              {"name": "simple-lstm", "options": {"hidden": 128},
                               "encoders": ["avg"], "seeds": 1}],
                 "correlation": {"method": "spearman", "rank_by": "id-perm",
                                 "min_support": 30, "resamples": 1000}},
        "provenance": {"harness_version": "0.2.0", "git_commit": "0123456789abcdef0123",
                       "spec_sha256": "feedbeef" * 8, "seed": 1, "device": "cuda",
                       "device_name": "NVIDIA H100 80GB HBM3", "threads": {"torch": 8},
                       "packages": {"torch": "2.3.0", "numpy": "2.1.0"},
                       "timings": {"total": 3600.0},
                       "corpus": {"train": 19876, "test": 500},
                       "vocab": {"source": "trained", "pieces": 1000, "dim": 100}},
        "encoders": {
            "laser": {"name": "laser", "plugin": "harness_plugins", "version": "0.2.0",
                      "dim": 1024, "declares": {"model": "LASER (93 languages)"}},
            "avg": {"name": "avg", "plugin": "harness_plugins", "dim": 100,
                    "options": {"pooling": "mean"}},
            "sbert": {"name": "sbert", "plugin": "harness_plugins", "dim": 384,
                      "declares": {"model": "all-MiniLM-L6-v2"}},
            "hier": {"name": "hier", "plugin": "harness_plugins", "dim": 100},
            "gem": {"name": "gem", "plugin": "harness_plugins", "dim": 100}},
        "runs": [mos_run(e) for e in ENCODERS] + [simple],
        "downstream": DOWNSTREAM,
        "downstream_source": "Kerscher & Eger 2020, Table 5; computed by the harness",
        "downstream_origin": {"laser": "reference", "avg": "computed", "sbert": "computed",
                              "hier": "computed", "gem": "computed"},
        "downstream_missing": {"qt": "weights not found"},
        "rankings": {"mos-lstm": {"id-perm": ranking()}},
        "correlations": correlations(),
        "published": [
            {"source": "Kerscher & Eger 2020, Table 4", "kind": "diagnostics",
             "columns": ["bleu", "id", "id-perm"],
             "scores": {"avg": {"bleu": 33.51, "id": 15.18, "id-perm": 35.12},
                        "sbert": {"bleu": 21.5, "id": 3.27, "id-perm": 94.78},
                        "infersent": {"bleu": 53.54, "id": 21.19, "id-perm": 91.29}},
             "models": {"sbert": {"model": "bert-base-nli-mean-tokens"}},
             "matches": {"avg": True, "sbert": False, "infersent": False}},
            {"source": "Kerscher & Eger 2020, Table 5", "kind": "downstream",
             "columns": ["MR", "CR"],
             "scores": {"avg": {"MR": 72.18, "CR": 74.49}},
             "matches": {"avg": True}}],
        "examples": [{"reference": "the point is , he adds .",
                      "outputs": [{"encoder": "laser", "decoder": "mos-lstm",
                                   "hypothesis": "the point is , he adds ."}]}],
    }


def rich_results() -> RunResults:
    """`rich_data` as typed results."""
    return RunResults.model_validate(rich_data())


def section(text: str, title: str) -> str:
    """The Markdown of one section, up to the next heading."""
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else None]
