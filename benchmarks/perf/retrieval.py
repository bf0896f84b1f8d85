"""The `retrieval` metric's cost at n = 1,000 test sentences and k = 100 candidates, side by side
with the way one would otherwise write it.

Both sides score the same 100,000 (vector, sentence) pairs with the same `mos-lstm` decoder
(1 x 256, one softmax, a 4,000-subword BPE vocabulary trained on the sentences given, 384-d
vectors), teacher-forced in eval mode:
- `harness`: the metric as a run calls it (`RetrievalMetric.sentence_statistics` with the score
  stage's `DecoderLikelihood`): every pair sorted by length into batches of at most 256
  sentences and 4,096 padded positions (`harness.generation.perplexity.reference_nll`);
- `per-vector`: the natural loop, one forward pass per test vector over its k candidates
  padded to the longest, the best a user gets without sorting across vectors.
The weights are freshly initialised (the cost does not depend on them); both sides must give
the same NLL for every pair (checked), and the script prints the seconds of each and their
ratio as one JSON object, with the matmul rate before and after.

    python benchmarks/perf/retrieval.py --sentences PATH/test.txt [--train PATH/train.txt]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).parent))

from matmul import rate  # noqa: E402

from harness.generation.perplexity import reference_nll  # noqa: E402
from harness.protocols import BuildContext, DecoderLikelihood  # noqa: E402
from harness.text.subwords import train_subword_vocab  # noqa: E402
from harness_plugins.decoders.lstm import build_mos_lstm  # noqa: E402
from harness_plugins.decoders.options import MosLstmOptions  # noqa: E402
from harness_plugins.metrics.graded import RetrievalMetric, distractor_sets  # noqa: E402

K, DIM = 100, 384


def per_vector(model: torch.nn.Module, vectors: np.ndarray, ids: list[list[int]],
               candidates: np.ndarray, bos: int, eos: int) -> np.ndarray:
    """NLL (n, k) with one padded forward pass per test vector over its k candidates."""
    nll = np.empty(candidates.shape)
    model.eval()
    with torch.inference_mode():
        for i, row in enumerate(candidates):
            sentences = [ids[j] for j in row]
            width = max(map(len, sentences)) + 1
            inputs = torch.full((len(row), width), eos, dtype=torch.long)
            targets = torch.full((len(row), width), -1, dtype=torch.long)
            for r, sentence in enumerate(sentences):
                inputs[r, :len(sentence) + 1] = torch.tensor([bos, *sentence])
                targets[r, :len(sentence) + 1] = torch.tensor([*sentence, eos])
            x = torch.from_numpy(np.repeat(vectors[i:i + 1], len(row), axis=0))
            log_probs = model(inputs, x).float()
            picked = log_probs.gather(-1, targets.clamp(min=0).unsqueeze(-1)).squeeze(-1)
            nll[i] = -torch.where(targets >= 0, picked.double(), 0.0).sum(dim=1).numpy()
    return nll


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=Path, required=True,
                        help="the test sentences, one per line (the first 1,000 are used)")
    parser.add_argument("--train", type=Path, default=None,
                        help="text to train the BPE vocabulary on (default: the sentences)")
    parser.add_argument("--n", type=int, default=1000)
    args = parser.parse_args()
    before = rate(torch.get_num_threads(), 5)
    sentences = [line.strip().lower() for line in args.sentences.read_text().splitlines()
                 if line.strip()][:args.n]
    train = sentences if args.train is None else [
        line.strip().lower() for line in args.train.read_text().splitlines()[:20000]]
    with tempfile.TemporaryDirectory() as directory:
        vocab = train_subword_vocab(train, Path(directory), bpe_size=4000, dim=100, epochs=1)
    torch.manual_seed(0)
    model = build_mos_lstm(MosLstmOptions(hidden=256, embeddings="own", freeze_embeddings=False),
                           BuildContext(vocab=vocab, input_dim=DIM))
    vectors = np.random.default_rng(0).normal(size=(len(sentences), DIM)).astype(np.float32)
    ids = vocab.encode(sentences)

    def nll(vector_rows: np.ndarray, sentence_rows: np.ndarray) -> np.ndarray:
        scored = reference_nll(model, vectors[vector_rows], [ids[j] for j in sentence_rows],
                               bos_id=vocab.bos_id, eos_id=vocab.eos_id, batch_size=256,
                               device="cpu")
        return np.array([value for value, _ in scored])

    recorded: list[np.ndarray] = []

    def recording(vector_rows: np.ndarray, sentence_rows: np.ndarray) -> np.ndarray:
        recorded.append(nll(vector_rows, sentence_rows))
        return recorded[-1]

    metric = RetrievalMetric(k=K, seed=1)
    likelihood = DecoderLikelihood(name="mos-lstm", encoder="random", sentences=len(ids),
                                   nll=recording)
    started = time.perf_counter()
    metric.sentence_statistics(sentences, sentences, decoder=likelihood)
    ours = time.perf_counter() - started

    candidates = np.column_stack([np.arange(len(ids)), distractor_sets(len(ids), K, 1)])
    started = time.perf_counter()
    loop = per_vector(model, vectors, ids, candidates, vocab.bos_id, vocab.eos_id)
    baseline = time.perf_counter() - started
    difference = float(np.abs(np.concatenate(recorded) - loop.reshape(-1)).max())
    print(json.dumps({
        "n": len(ids), "k": K, "pairs": len(ids) * K,
        "subwords_per_sentence": round(float(np.mean([len(s) + 1 for s in ids])), 2),
        "harness_s": round(ours, 2), "per_vector_s": round(baseline, 2),
        "speedup": round(baseline / ours, 2), "max_nll_difference": difference,
        "threads": torch.get_num_threads(), "matmul_before": before,
        "matmul_after": rate(torch.get_num_threads(), 5)}, indent=1))
    if difference > 1e-3:
        raise SystemExit(f"the two sides disagree: max NLL difference {difference}")


if __name__ == "__main__":
    main()
