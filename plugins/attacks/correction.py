"""Iterative correction (vec2text, Morris et al. 2023, Sec. 3): a model that rewrites a
hypothesis x_t given the attacked vector e, the hypothesis's own vector e_t = phi(x_t) (a
black-box query of the store) and their difference, p(x_{t+1} | e, e_t, e - e_t, x_t), trained
on the adaptive decoder's hypotheses of the leaked training pairs; at test time T steps of a
sequence-level beam, every candidate re-encoded and ranked by cos(phi(x), e), the best
hypothesis of any step kept (not the last).

Noise augmentation, the attacker's use of its query access: under a randomised defence the
store answers every query with fresh noise, so each training epoch reads the leaked pairs'
target vectors e afresh, the leaked texts re-encoded through the store (epoch 0: the stored
vectors), and the corrector learns to correct toward e whatever draw of the noise e carries
rather than one. The hypotheses, and their vectors e_t (one query per hypothesis, as at test
time), are the same every epoch: the decoder's hypotheses read the stored vectors, as at test
time it reads the attacked ones. A deterministic store (the first re-query equals the stored
vectors exactly, or a re-query the one before it) is not queried again (`Redraws`).

The corrector here is written for a CPU run: a word-level sequence-to-sequence GRU (Cho et al.
2014) whose decoder starts from, and reads at every step, an MLP of [e; e_t; e - e_t] (each
standardised by the stored leaked vectors' statistics) and attends over the hypothesis's words
(dot attention, Luong et al. 2015), where vec2text conditions a T5 on the three vectors
projected to pseudo-tokens."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from harness.plugin import AttackInputs, Decode, Inversion, Query, ThreatModel, unit_rows

from .decoding import needs
from .draws import Redraws

PAD, BOS, EOS, UNK = 0, 1, 2, 3
SPECIALS = ("<pad>", "<s>", "</s>", "<unk>")
CHUNK = 512
"""Hypotheses rewritten at once (times `candidates` rows of logits over the vocabulary)."""


class Words:
    """A word vocabulary of the leaked sentences: the `size` most frequent words (ties in
    alphabetical order) after the four specials; a word outside it reads as <unk>."""

    def __init__(self, texts: Sequence[str], size: int) -> None:
        counts = Counter(word for text in texts for word in text.split())
        kept = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:size]
        self.words = [*SPECIALS, *(word for word, _ in kept)]
        self.index = {word: i for i, word in enumerate(self.words)}

    def __len__(self) -> int:
        return len(self.words)

    def ids(self, text: str, limit: int) -> list[int]:
        return [self.index.get(word, UNK) for word in text.split()][:limit]

    def text(self, ids: Sequence[int]) -> str:
        return " ".join(self.words[i] for i in ids if i > UNK)


def padded(rows: Sequence[Sequence[int]]) -> torch.Tensor:
    """(len(rows), longest) token ids, PAD after each row's end."""
    out = torch.full((len(rows), max([1, *map(len, rows)])), PAD, dtype=torch.long)
    for i, row in enumerate(rows):
        out[i, :len(row)] = torch.tensor(row, dtype=torch.long)
    return out


class CorrectorNet(nn.Module):
    """p(x | e, e_t, x_t): the hypothesis x_t (BOS first, so never empty) read by a
    bidirectional GRU; a GRU writer started from c = tanh(W [e; e_t; e - e_t] + b), fed c beside
    each word, its output at every step joined with its dot attention over the hypothesis."""

    def __init__(self, vocab: int, dim: int, hidden: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden, padding_idx=PAD)
        self.reader = nn.GRU(hidden, hidden, batch_first=True, bidirectional=True)
        self.bridge = nn.Linear(2 * hidden, hidden)
        self.condition = nn.Sequential(nn.Linear(3 * dim, hidden), nn.Tanh())
        self.writer = nn.GRU(2 * hidden, hidden, batch_first=True)
        self.out = nn.Linear(2 * hidden, vocab)

    def memory(self, hypotheses: torch.Tensor, target: torch.Tensor, hypothesis: torch.Tensor
               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(c, the hypothesis's states (B, S, H), its mask (B, S)) for the writer."""
        c = self.condition(torch.cat([target, hypothesis, target - hypothesis], dim=-1))
        mask = hypotheses != PAD
        # packed: the backward direction starts at each hypothesis's last word, not its padding
        packed = nn.utils.rnn.pack_padded_sequence(
            self.embed(hypotheses), mask.sum(1).cpu(), batch_first=True, enforce_sorted=False)
        states, _ = self.reader(packed)
        states, _ = nn.utils.rnn.pad_packed_sequence(states, batch_first=True,
                                                     total_length=hypotheses.shape[1])
        return c, self.bridge(states), mask

    def forward(self, inputs: torch.Tensor, c: torch.Tensor, states: torch.Tensor,
                mask: torch.Tensor, state: torch.Tensor | None = None
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits (B, T, V) of the next word after each of `inputs` (B, T), and the writer's
        state."""
        words = torch.cat([self.embed(inputs), c[:, None].expand(-1, inputs.shape[1], -1)], -1)
        written, state = self.writer(words, c[None].contiguous() if state is None else state)
        scores = (written @ states.transpose(1, 2)).masked_fill(~mask[:, None], float("-inf"))
        context = torch.softmax(scores, dim=-1) @ states
        return self.out(torch.cat([written, context], dim=-1)), state


@dataclass(frozen=True)
class Settings:
    """The corrector's options (`CorrectorOptions` in the plugin's registration say what each
    means), with its training's batch size and Adam's learning rate."""

    steps: int = 3
    beam: int = 2
    candidates: int = 4
    pairs: int = 2000
    hypotheses: int = 2
    epochs: int = 10
    hidden: int = 128
    words: int = 5000
    batch_size: int = 64
    lr: float = 3e-3


class Corrector:
    """vec2text's correction with `steps` steps (T), a beam of `beam` hypotheses per vector and
    `candidates` proposals per hypothesis and step (the corrector's greedy rewrite and samples
    from it; at step 0, the adaptive decoder's best and samples), trained on `hypotheses` of the
    decoder's candidates for each of the first `pairs` leaked pairs, each epoch on a fresh
    draw of those pairs' vectors through the store (`epochs` - 1 queries of the `pairs` texts
    under a randomised defence, at most two under a deterministic one)."""

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        # the decoder it is handed learnt from every leaked pair; `pairs` is how many it trains on
        self.threat = ThreatModel(leaked=None, decoder=True, queries=True)
        self.seed, self.device = 0, "cpu"
        self._decode: Decode | None = None
        self._query: Query | None = None
        self._known: dict[str, np.ndarray] = {}
        self.net: CorrectorNet | None = None
        self.words = Words([], 0)
        self.max_len = 1
        self.mean: np.ndarray | float = 0.0  # the leaked vectors' statistics, per dimension
        self.scale: np.ndarray | float = 1.0

    # --- what the store says of a text -------------------------------------------------------

    def _vectors(self, texts: Sequence[str]) -> np.ndarray:
        """The vectors of `texts` through the store (float32), each text queried once."""
        assert self._query is not None
        missing = sorted({t for t in texts if t not in self._known})
        if missing:
            for text, row in zip(missing, np.asarray(self._query(missing), dtype=np.float32),
                                 strict=True):
                self._known[text] = row
        return np.stack([self._known[t] for t in texts]) if texts else np.zeros((0, 0))

    # --- training ------------------------------------------------------------------------------

    def fit(self, inputs: AttackInputs) -> None:
        decode = needs(inputs.decode, "decoder")
        query = needs(inputs.query, "query access")
        self._decode, self._query, self._known = decode, query, {}
        self.seed, self.device = inputs.seed, inputs.device
        s = self.settings
        count = s.pairs if s.steps else 0  # no step to take: nothing to learn
        texts = list(inputs.texts[:count])
        targets = np.asarray(inputs.vectors[:count], dtype=np.float32)
        self.words = Words(texts, s.words)
        self.max_len = min(64, max((len(t.split()) for t in texts), default=1) + 2)
        self.mean = targets.mean(axis=0) if len(targets) else 0.0
        self.scale = targets.std(axis=0) + 1e-6 if len(targets) else 1.0
        found = decode(targets, s.hypotheses) if len(targets) else []
        rows = [(i, h) for i, drawn in enumerate(found) for h in drawn]
        guessed = self._vectors([h for _, h in rows]) if rows else targets[:0]
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.seed)
            self.net = CorrectorNet(len(self.words), targets.shape[1], s.hidden).to(self.device)
        if rows:
            self._train([self.words.ids(texts[i], self.max_len) for i, _ in rows],
                        [h for _, h in rows], np.array([i for i, _ in rows]),
                        Redraws(targets, texts, query), guessed)

    def _standard(self, vectors: np.ndarray) -> torch.Tensor:
        return torch.as_tensor((np.asarray(vectors, dtype=np.float32) - self.mean) / self.scale,
                               dtype=torch.float32, device=self.device)

    def _train(self, answers: list[list[int]], hypotheses: list[str], pairs: np.ndarray,
               draws: Redraws, guessed: np.ndarray) -> None:
        """Teacher-forced cross-entropy of each answer given (e, e_t, x_t), Adam, shuffled
        mini-batches from a generator seeded by the attack's seed. Row j's e is row `pairs[j]`
        of the epoch's draw of the leaked vectors (`draws.next()`, one per epoch)."""
        s, net = self.settings, self.net
        assert net is not None
        order_rng = np.random.default_rng(self.seed)
        optimiser = torch.optim.Adam(net.parameters(), lr=s.lr)
        read = [[BOS, *self.words.ids(h, self.max_len)] for h in hypotheses]
        net.train()
        for _ in range(s.epochs):
            targets = draws.next()[pairs]
            order = order_rng.permutation(len(answers))
            for start in range(0, len(order), s.batch_size):
                batch = order[start:start + s.batch_size]
                c, states, mask = net.memory(padded([read[i] for i in batch]).to(self.device),
                                             self._standard(targets[batch]),
                                             self._standard(guessed[batch]))
                inputs = padded([[BOS, *answers[i]] for i in batch]).to(self.device)
                wanted = padded([[*answers[i], EOS] for i in batch]).to(self.device)
                logits, _ = net(inputs, c, states, mask)
                loss = nn.functional.cross_entropy(logits.flatten(0, 1), wanted.flatten(),
                                                   ignore_index=PAD)
                optimiser.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(net.parameters(), 1.0)
                optimiser.step()
        net.eval()

    # --- correction ----------------------------------------------------------------------------

    def rewrite(self, hypotheses: list[str], targets: np.ndarray, count: int,
                generator: torch.Generator) -> list[list[str]]:
        """`count` rewrites of each hypothesis toward its target vector: the greedy one first,
        then samples (words outside the vocabulary are never written); `CHUNK` hypotheses at
        a time."""
        return [found for start in range(0, len(hypotheses), CHUNK)
                for found in self._rewrite(hypotheses[start:start + CHUNK],
                                           targets[start:start + CHUNK], count, generator)]

    @torch.no_grad()
    def _rewrite(self, hypotheses: list[str], targets: np.ndarray, count: int,
                 generator: torch.Generator) -> list[list[str]]:
        net = self.net
        assert net is not None
        rows = [h for h in hypotheses for _ in range(count)]
        greedy = torch.tensor([k == 0 for _ in hypotheses for k in range(count)],
                              device=self.device)
        c, states, mask = net.memory(
            padded([[BOS, *self.words.ids(h, self.max_len)] for h in rows]).to(self.device),
            self._standard(np.repeat(targets, count, axis=0)),
            self._standard(np.repeat(self._vectors(hypotheses), count, axis=0)))
        token = torch.full((len(rows), 1), BOS, dtype=torch.long, device=self.device)
        done = torch.zeros(len(rows), dtype=torch.bool, device=self.device)
        written: list[torch.Tensor] = []
        state = None
        for _ in range(self.max_len):
            logits, state = net(token, c, states, mask, state)
            logits = logits[:, -1].float()
            logits[:, [PAD, BOS, UNK]] = float("-inf")
            drawn = torch.multinomial(torch.softmax(logits, -1).cpu(), 1,
                                      generator=generator).to(self.device)[:, 0]
            token = torch.where(greedy, logits.argmax(-1), drawn)
            token = torch.where(done, torch.full_like(token, PAD), token)
            written.append(token)
            done |= token == EOS
            token = token[:, None]
            if bool(done.all()):
                break
        ids = torch.stack(written, 1).cpu().tolist()
        texts = [self.words.text(row[:row.index(EOS)] if EOS in row else row) for row in ids]
        return [texts[i * count:(i + 1) * count] for i in range(len(hypotheses))]

    def invert(self, vectors: np.ndarray) -> Inversion:
        """Step 0: the decoder's `candidates`, the `beam` closest to e kept; each later step
        adds `candidates` rewrites of every beam hypothesis and keeps the `beam` closest of
        all; the answer is the closest of any step, its cosine the score. `steps` holds the
        best hypothesis after each step."""
        assert self._decode is not None and self.net is not None, "fit first"
        s = self.settings
        vectors = np.asarray(vectors, dtype=np.float32)
        if not len(vectors):
            return Inversion(sentences=[], scores=[], steps=[[] for _ in range(s.steps + 1)])
        targets = unit_rows(vectors)
        generator = torch.Generator().manual_seed(self.seed)
        proposals = [list(dict.fromkeys(row)) or [""]
                     for row in self._decode(vectors, s.candidates)]
        beams: list[list[tuple[float, str]]] = [[] for _ in vectors]
        steps: list[list[str]] = []
        for step in range(s.steps + 1):
            self._vectors([t for row in proposals for t in row])  # one query for the step
            for i, row in enumerate(proposals):
                seen = {text for _, text in beams[i]}
                fresh = [t for t in dict.fromkeys(row) if t not in seen]
                cosines = unit_rows(self._vectors(fresh)) @ targets[i] if fresh else []
                pool = beams[i] + list(zip(map(float, cosines), fresh))
                # the closest first; among equals the one found first (stable sort)
                beams[i] = sorted(pool, key=lambda item: -item[0])[:s.beam]
            steps.append([beam[0][1] for beam in beams])
            if step == s.steps:
                break
            pairs = [(i, text) for i, beam in enumerate(beams) for _, text in beam]
            rewritten = self.rewrite([text for _, text in pairs],
                                     vectors[[i for i, _ in pairs]], s.candidates, generator)
            proposals = [[] for _ in vectors]
            for (i, _), texts in zip(pairs, rewritten, strict=True):
                proposals[i].extend(dict.fromkeys(texts))
        return Inversion(sentences=steps[-1], scores=[beam[0][0] for beam in beams],
                         steps=steps)
