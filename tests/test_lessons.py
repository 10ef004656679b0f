"""The engine's numbers behind the positional, embedding and dropout lessons: PE(pos + k) = R(k) PE(pos), position
similarity, attention without positions under a reordering, the one-hot product, cosine similarity (PyTorch)."""
import numpy as np
import pytest
import torch

import engine
from engine import positional

SMALL = dict(d_model=8, n_heads=2, d_ff=16, n_layers=2)


@pytest.mark.parametrize("d_model", [2, 4, 6, 32, 512])
@pytest.mark.parametrize("k", [1, 3, 17])
def test_rotation_moves_the_paper_encoding_by_k(d_model, k):
    table = positional.sinusoidal(100, d_model)  # (100, d_model)
    r = positional.rotation(k, d_model)
    for pos in (0, 5, 100 - 1 - k):
        np.testing.assert_allclose(r @ table[pos], table[pos + k], rtol=0, atol=1e-12)


def test_rotation_leaves_out_an_odd_last_column_and_is_orthogonal():
    r = positional.rotation(2, 5)
    assert r.shape == (4, 4)
    np.testing.assert_allclose(r.T @ r, np.eye(4), atol=1e-15)
    table = positional.sinusoidal(10, 5)
    np.testing.assert_allclose(r @ table[3, :4], table[5, :4], atol=1e-12)


@pytest.mark.parametrize("kind", ["blog", "blog_table"])
def test_rotation_does_not_move_the_blogs_encodings(kind):
    table = positional.positional_encoding(kind, 20, 4)
    assert np.abs(positional.rotation(1, 4) @ table[1] - table[2]).max() > 1e-3


def test_frequencies_are_the_papers():
    np.testing.assert_allclose(positional.frequencies(6), [1.0, 10000 ** (-2 / 6), 10000 ** (-4 / 6)], rtol=1e-15)


def test_position_similarity_depends_on_distance_only_for_the_paper_encoding():
    table = positional.sinusoidal(60, 16)
    gram = positional.position_similarity(table)
    np.testing.assert_allclose(gram, table @ table.T)
    curves = positional.dot_by_distance(table, (0, 10, 30))
    expected = np.cos(np.outer(np.arange(60), positional.frequencies(16))).sum(1)  # sum_i cos(w_i k)
    for pos, curve in curves.items():
        assert curve.shape == (60 - pos,)
        np.testing.assert_allclose(curve, expected[:60 - pos], atol=1e-12)
    blog = positional.dot_by_distance(positional.positional_encoding("blog", 60, 16), (0, 10))
    assert np.abs(blog[0][:50] - blog[10]).max() > 1e-2


@pytest.mark.parametrize("encoding", ["sinusoidal", "learned", "blog_table"])
def test_without_positions_attention_of_a_reordering_is_the_same_matrix_permuted(encoding):
    model = engine.preset("paper", seed=3, pos_encoding=encoding, **SMALL)
    bare = model.without_positions()
    assert bare.config.pos_encoding == "none" and "pos.learned" not in bare.params
    words = "the cat sat on a dog".split()
    order = [5, 2, 0, 4, 1, 3]
    before, after = bare.run(" ".join(words)), bare.run(" ".join(words[i] for i in order))
    with_pe = model.run(" ".join(words[i] for i in order))
    for layer in range(SMALL["n_layers"]):
        name = f"enc.{layer}.attn.weights"
        permuted = before[name][:, order][:, :, order]  # (h, n, n)
        np.testing.assert_allclose(after[name], permuted, rtol=0, atol=1e-12)
        assert np.abs(with_pe[name] - model.run(" ".join(words))[name][:, order][:, :, order]).max() > 1e-3


@pytest.mark.parametrize("scale", [1.0, np.sqrt(8)])
def test_one_hot_product_is_the_lookup(scale):
    model = engine.preset("paper", seed=1, **SMALL)
    table, ids = model.params["embed.src"], [4, 0, 4, 9]
    chi = positional.one_hot(ids, table.shape[0])
    assert chi.shape == (4, table.shape[0]) and (chi.sum(1) == 1).all() and (chi[np.arange(4), ids] == 1).all()
    np.testing.assert_array_equal(positional.embed_as_product(table, ids, scale), table[ids] * scale)


def test_one_hot_product_equals_the_traced_embedding():
    model = engine.preset("paper", seed=2, **SMALL)
    trace = model.run("the cat sat")
    step = trace.step("src.embed")
    product = positional.embed_as_product(model.params["embed.src"], list(trace.src_ids), step.meta["scale"])
    np.testing.assert_array_equal(product, trace["src.embed"])


@pytest.mark.parametrize("model", [engine.preset("hello-world"), engine.trained()], ids=["blog", "trained"])
def test_cosine_similarity_equals_torch(model):
    table = model.params["embed.src"]
    ours = positional.cosine_similarity(table)
    t = torch.tensor(np.array(table))
    theirs = torch.nn.functional.cosine_similarity(t[:, None, :], t[None, :, :], dim=-1).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.diag(ours), 1.0, atol=1e-12)
