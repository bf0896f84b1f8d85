"""The attack `example-neighbours` (the nearest leaked sentence): the conformance kit, and what
it reads back where the answer is known. The example plugin's own encoder `example-bow` stands
in for the attacked store.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import v2s_example_plugin as plugin

from harness.protocols import AttackInputs, BuildContext, Options, ThreatModel, threat_model
from harness.testing import check_attack, check_registration

LEAKED = ["the cat sat on the mat", "a dog barked at the postman", "rain fell on the old town",
          "she wrote her brother a long letter", "two trains left the station at noon"]
"""Leaked training sentences, no two with the same bag of words."""


def attack() -> object:
    """A new attack, built as a run builds it."""
    return plugin.build_neighbours(Options(), BuildContext(seed=1))


def store(texts: list[str]) -> np.ndarray:
    """The attacked store's vectors of `texts`: the example plugin's hashed bag of words."""
    return plugin.build_bow(plugin.BagOfWordsOptions(dim=256), BuildContext()).encode(texts)


def fitted(tmp_path: Path, texts: list[str] = LEAKED) -> object:
    """The attack fitted on `texts` and their vectors, as the core hands all leaked pairs."""
    found = attack()
    found.fit(AttackInputs(texts=texts, vectors=store(texts), seed=1, workdir=tmp_path))
    return found


def test_it_is_registered_as_an_attack() -> None:
    (info,) = [i for i in check_registration(plugin, name="example") if i.kind == "attack"]
    assert info.name == "example-neighbours" and info.status() == "ok"


def test_it_conforms() -> None:
    found = check_attack(attack())
    assert len(found) == 5 and all(isinstance(text, str) and text for text in found)
    found = check_attack(attack(), LEAKED + ["a cat sat on a mat", "the dog barked"])
    assert found[-2:] == ["the cat sat on the mat", "a dog barked at the postman"]


def test_it_asks_for_the_leaked_pairs_and_nothing_else() -> None:
    assert threat_model(attack()) == ThreatModel(leaked=None, queries=False, public=False,
                                                 surrogate=False, decoder=False)
    assert threat_model(attack()).describe() == "all leaked training pairs"


def test_a_leaked_vector_reads_back_as_its_own_sentence(tmp_path: Path) -> None:
    found = fitted(tmp_path)
    vectors = store(LEAKED)
    inversion = found.invert(vectors[[3, 0, 4, 1, 2, 3]])
    assert inversion.sentences == [LEAKED[i] for i in (3, 0, 4, 1, 2, 3)]
    assert inversion.words is None
    np.testing.assert_allclose(inversion.scores, 1.0, rtol=1e-6)
    # cosine ignores scale: a vector 10 times as long is the same sentence
    assert found.invert(10 * vectors[[2]]).sentences == [LEAKED[2]]


def test_an_unseen_vector_reads_back_as_the_closest_leaked_sentence(tmp_path: Path) -> None:
    inversion = fitted(tmp_path).invert(store(["the old town in the rain", "zebra quokka"]))
    assert inversion.sentences[0] == "rain fell on the old town"
    assert inversion.scores[0] == pytest.approx(
        float(store(["the old town in the rain"])[0] @ store([LEAKED[2]])[0]), rel=1e-5)
    assert 0.0 <= inversion.scores[1] < inversion.scores[0]


def test_equal_neighbours_and_empty_inputs_are_handled(tmp_path: Path) -> None:
    # two leaked sentences with one bag of words: the first leaked one wins
    twins = fitted(tmp_path, ["dog bites man", "man bites dog"])
    assert twins.invert(store(["bites man dog"])).sentences == ["dog bites man"]
    # nothing leaked (a threat model granting 0 pairs would give this): empty readings
    empty = attack()
    empty.fit(AttackInputs(texts=[], vectors=np.zeros((0, 256), dtype=np.float32), seed=1,
                           workdir=tmp_path))
    inversion = empty.invert(store(["the cat"]))
    assert inversion.sentences == [""] and inversion.scores == [0.0]
    # no attacked vectors: nothing read back
    assert fitted(tmp_path).invert(np.zeros((0, 256), dtype=np.float32)).sentences == []
