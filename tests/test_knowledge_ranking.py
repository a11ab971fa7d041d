"""The section ranking's scoring on hand-made vectors (no model): a section answers as a whole."""

from __future__ import annotations

import numpy as np

from taskcrew.knowledge.ranking import DenseIndex, Weights


def _unit(*values: float) -> np.ndarray:
    v = np.asarray(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_the_best_chunk_of_a_section_lifts_its_siblings() -> None:
    query = _unit(1, 0, 0)
    chunks = np.vstack(
        [
            _unit(0.9, 0.436, 0),  # A1: cos 0.9 with the query
            _unit(0.5, 0.866, 0),  # A2: cos 0.5, same section as A1
            _unit(0.6, 0, 0.8),  # B1: cos 0.6, another section
            _unit(0, 1, 0),  # C1: cos 0, a third section
        ]
    )
    sections = np.vstack([_unit(0.2, 1, 0), _unit(0.2, 0, 1), _unit(0, 0, 1)])  # equal-ish names
    index = DenseIndex(chunks, np.asarray([0, 0, 1, 2]), sections)
    weights = Weights(section=0.0, bm25=0.0, section_best=0.5)
    rows, scores = index.rank(query, [0, 2], {}, weights)
    ranked = [int(rows[i]) for i in np.argsort(-scores)]
    assert 1 in ranked  # A2 is scored though no ranker proposed it
    assert ranked.index(1) < ranked.index(2)  # A2 (0.5 + 0.45) above B1 (0.6 + 0.3)
    rows, scores = index.rank(query, [0, 2], {}, Weights(section=0.0, bm25=0.0, section_best=0.0))
    ranked = [int(rows[i]) for i in np.argsort(-scores)]
    assert ranked.index(2) < ranked.index(1)  # without it, B1 above A2
