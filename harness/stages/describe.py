"""What each encoder of a run is, recorded beside its scores (results.json `encoders`).

The description is taken once the encoder has encoded the corpus: its registered name, plugin and
options, the model it declares it is (its optional `declares()`, `harness.protocols
.declared_model`), the digests of the files it says it reads, the vocabulary it pools when it
pools the run's subword vectors, and the dimension of its vectors. A reference table's row is
bound to a model, not a name: it applies to the encoder only when `declares` matches it
(`harness.results.declarations.row_mismatch`).
"""

from __future__ import annotations

from harness.errors import plugin_call
from harness.protocols import declared_model
from harness.results.declarations import pooled_vectors, split_declaration
from harness.results.model import EncoderDescription
from harness.spec import Component
from harness.stages.encode import Encoded
from harness.stages.vocab import Vocab


def describe_encoder(component: Component, encoded: Encoded, vocab: Vocab) -> EncoderDescription:
    """What the encoder `component` that produced `encoded` over `vocab` is."""
    with plugin_call(component.plugin, f"encoder {component.name!r}: declares"):
        declared = declared_model(encoded.model) if encoded.model is not None else {}
    declares, files = split_declaration(declared, component.plugin, component.name)
    vectors = declares.get("vectors")  # pooled subword vectors: the run's, by name?
    return EncoderDescription(
        name=component.name, plugin=component.plugin, version=component.info.version or None,
        options=component.settings.model_dump(mode="json"), files=files,
        vocab=vocab.key if vectors and vectors == pooled_vectors(vocab.vocab) else None,
        dim=encoded.dim,
        declares=declares, control=component.info.control, family=component.family)
