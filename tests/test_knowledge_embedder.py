"""The embedder's bounded batches: a text's vector does not depend on what it is batched with."""

from __future__ import annotations

import numpy as np

from taskcrew.knowledge import MiniLMEmbedder
from taskcrew.knowledge.embedder import token_batches


def test_batches_are_bounded_by_texts_and_padded_tokens() -> None:
    lengths = [5, 250, 40, 40, 300, 12, 12, 12, 100]
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    runs = token_batches(order, lengths, most=3, tokens=256)
    assert sorted(i for run in runs for i in run) == list(range(len(lengths)))
    assert [i for run in runs for i in run] == order  # length order kept
    for run in runs:
        assert len(run) <= 3
        assert len(run) == 1 or max(lengths[i] for i in run) * len(run) <= 256
    assert [300] in [[lengths[i] for i in run] for run in runs]  # too long for the budget: alone


def test_a_batch_embeds_each_text_as_it_would_alone(knowledge_embedder: MiniLMEmbedder) -> None:
    texts = [
        "Pay a vendor.",
        "When a supplier's bill arrives, check the purchase order and the goods receipt first. " * 6,
        "Net 30",
        "Record the customer's payment against the open invoice and keep the remittance advice.",
    ]
    small = MiniLMEmbedder(batch_tokens=64)  # same model files, at most 64 padded tokens a run
    side_by_side = MiniLMEmbedder(batch_tokens=64, threads=3)  # its runs go three at a time
    one_by_one = MiniLMEmbedder(batch_tokens=64, threads=1)
    together = knowledge_embedder.embed(texts)
    apart = np.vstack([knowledge_embedder.embed([t]) for t in texts])
    assert np.allclose(together, apart, atol=1e-5)
    assert np.allclose(small.embed(texts), apart, atol=1e-5)
    many = texts * 5  # more runs than threads: each vector lands in its own text's row
    assert np.allclose(side_by_side.embed(many), one_by_one.embed(many), atol=1e-5)
    assert np.allclose(side_by_side.embed(many)[4:8], apart, atol=1e-5)
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
