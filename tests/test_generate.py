"""Autoregressive generation: greedy, sampling, beam search, and the `generate` command."""
import json
import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from conftest import examples
from engine.__main__ import main
from engine.generate import (DISAGREEMENT, beam_search, disagreement_example, generate, length_penalty,
                             log_softmax, sampling_distribution, sequence_score, top_k_filter, top_p_filter,
                             with_temperature)
from engine.tokens import EOS, SOS

SMALL = {"d_model": 16, "n_heads": 2, "d_ff": 32, "n_layers": 1}  # fast; the paper vocabulary has 169 tokens
SOURCES = ("Hello World", "the cat sat on the mat", "good morning", "how are you ?")


def small_model(seed=3):
    return engine.preset("paper", seed=seed, **SMALL)


@pytest.fixture(scope="module")
def small():
    return small_model()


@pytest.fixture(scope="module")
def hello():
    return engine.preset("hello-world")


def with_eos_bias(model, bias):
    """The model with `bias` added to EOS's output bias, so it finishes sooner (or at once)."""
    b = np.array(model.params["unembed.b"])
    b[model.vocab.id(EOS)] += bias
    return model.with_params({"unembed.b": b})


# --- the loop ---------------------------------------------------------------------------------------------

def test_every_steps_trace_is_a_fresh_full_forward_pass_on_the_growing_prefix(small):
    """Its last row is the step's numbers, which incremental decoding computed: equal up to rounding (1e-12)."""
    g = generate(small, "the cat sat on the mat", max_len=6)
    assert len(g.steps) == 6 and "<unk>" not in g.tokens  # so the prefix can be written as text below
    for i, step in enumerate(g.steps):
        assert step.prefix_ids == (small.vocab.id(SOS),) + g.token_ids[:i]
        assert step.prefix_tokens == (SOS,) + g.tokens[:i]
        fresh = small.run("the cat sat on the mat", " ".join(g.tokens[:i]))
        np.testing.assert_allclose(step.probs, fresh["probs"][-1], rtol=0, atol=1e-12)
        np.testing.assert_allclose(step.logits, fresh["masked_logits"][-1], rtol=0, atol=1e-12)
        assert step.trace["dec.0.self_attn.mask"].shape == (i + 1, i + 1)  # the causal mask grows
        assert step.trace["probs"].shape == (i + 1, len(small.vocab))


def test_the_encoder_gives_the_same_numbers_at_every_step(small):
    """The model needs the encoder once: what the page says of the steps, which each run it again, holds."""
    steps = generate(small, "the cat sat on the mat", max_len=4).steps
    assert len(steps) == 4
    for step in steps[1:]:
        np.testing.assert_array_equal(step.trace["enc.out"], steps[0].trace["enc.out"])


def test_greedy_takes_the_most_likely_token_and_reports_its_probability(small):
    for step in generate(small, "good morning", max_len=5).steps:
        assert step.token_id == int(np.argmax(step.probs)) and step.token == small.vocab.tokens[step.token_id]
        assert step.prob == step.probs[step.token_id] == step.sampled_prob
        assert step.logprob == pytest.approx(math.log(step.prob), abs=1e-12)
        np.testing.assert_array_equal(step.sampled_from, step.probs)


def test_unk_is_never_generated_and_a_prefix_is_kept_as_ids(hello):
    g = generate(hello, "Hello World", max_len=4)
    assert g.tokens == ("c", "?", "c", "c") and "<unk>" not in g.tokens  # the post's random weights say so
    assert all(step.probs[hello.vocab.id("<unk>")] == 0.0 for step in g.steps)
    last = g.steps[-1]
    assert last.trace.tgt_ids == last.prefix_ids == (6, 9, 4, 9)
    np.testing.assert_allclose(last.prob, 0.268213, atol=5e-7)
    np.testing.assert_allclose(last.probs, hello.run_ids(last.trace.src_ids, last.prefix_ids)["probs"][-1], rtol=0,
                               atol=1e-12)


def test_run_ids_is_run_from_token_ids(small):
    by_text = small.run("the cat", "el gato")
    by_ids = small.run_ids(by_text.src_ids, by_text.tgt_ids)
    assert list(by_ids) == list(by_text) and by_ids.tgt_tokens == ("SOS", "el", "gato")
    for name in by_text:
        np.testing.assert_array_equal(by_ids[name], by_text[name])
    last = len(small.vocab) - 1
    with pytest.raises(ValueError, match=f"between 0 and {last}, got"):
        small.run_ids([1], [1, last + 1])
    with pytest.raises(ValueError, match="start token"):
        small.run_ids([1], [])


def test_stops_at_eos(small):
    g = generate(with_eos_bias(small, 100.0), "Hello World", max_len=10)
    assert g.tokens == (EOS,) and g.finished and g.text == ""
    g = generate(with_eos_bias(small, 3.0), "Hello World", max_len=10)
    assert g.finished and g.tokens.count(EOS) == 1 and g.tokens[-1] == EOS and len(g.tokens) < 10


@pytest.mark.parametrize("max_len", [1, 3, 7])
def test_respects_max_len(hello, max_len):
    g = generate(hello, "Hello World", max_len=max_len)
    assert len(g.steps) == max_len and not g.finished
    assert len(g.steps[-1].prefix_ids) == max_len  # SOS and max_len - 1 generated tokens


def test_max_len_may_reach_the_models_own_limit():
    model = engine.preset("hello-world", max_len=4)
    assert len(generate(model, "Hello World", max_len=4).tokens) == 4
    with pytest.raises(ValueError, match=r"from 1 to the model's max_len \(4\), got 5"):
        generate(model, "Hello World", max_len=5)


# --- sampling -----------------------------------------------------------------------------------------------

logit_rows = st.lists(st.floats(-20, 20), min_size=2, max_size=30).map(np.array)


@settings(max_examples=examples(60), deadline=None)
@given(logit_rows, st.integers(1, 30))
def test_top_k_keeps_exactly_the_k_most_likely_and_renormalises(logits, k):
    k = min(k, len(logits))
    probs = with_temperature(logits, 1.0)
    kept = top_k_filter(probs, k)
    assert kept.sum() == pytest.approx(1.0) and np.count_nonzero(kept) <= k
    order = np.argsort(-probs, kind="stable")
    np.testing.assert_allclose(kept[order[:k]], probs[order[:k]] / probs[order[:k]].sum())
    assert np.all(kept[order[k:]] == 0)


@settings(max_examples=examples(60), deadline=None)
@given(logit_rows, st.floats(1e-6, 1.0))
def test_top_p_keeps_the_fewest_most_likely_tokens_reaching_p(logits, p):
    probs = with_temperature(logits, 1.0)
    kept = top_p_filter(probs, p)
    order = np.argsort(-probs, kind="stable")
    n = np.count_nonzero(kept[order] > 0)
    assert kept.sum() == pytest.approx(1.0) and np.all(kept[order[n:]] == 0) and np.all(kept[order[:n]] > 0)
    mass = np.cumsum(probs[order])
    assert mass[n - 1] >= p or n == len(probs)  # enough mass ...
    assert n == 1 or mass[n - 2] < p  # ... and no token more than needed


@settings(max_examples=examples(60), deadline=None)
@given(logit_rows, st.floats(0.05, 20))
def test_temperature_divides_the_logits(logits, temperature):
    dist = with_temperature(logits, temperature)
    top = np.argmax(logits)
    assert dist.sum() == pytest.approx(1.0) and dist[top] == dist.max()
    seen = dist > 1e-250  # where exp did not underflow to 0
    np.testing.assert_allclose(np.log(dist[seen] / dist[top]), (logits[seen] - logits[top]) / temperature,
                               atol=1e-9)


def test_temperature_one_is_the_models_distribution_and_a_tiny_one_is_one_hot(small):
    step = generate(small, "Hello World", max_len=1).steps[0]
    np.testing.assert_allclose(with_temperature(step.logits, 1.0), step.probs, atol=1e-15)
    one_hot = with_temperature(step.logits, 1e-300)
    assert one_hot[np.argmax(step.probs)] == 1.0 and one_hot.sum() == 1.0  # no overflow into NaN


@pytest.mark.parametrize("strategy, options", [("temperature", {"temperature": 1.5}), ("top_k", {"k": 5}),
                                               ("top_p", {"p": 0.5, "temperature": 0.8})])
def test_each_step_records_the_distribution_it_sampled_from(small, strategy, options):
    g = generate(small, "good morning", strategy=strategy, max_len=8, seed=5, **options)
    for step in g.steps:
        expected = sampling_distribution(step.logits, step.probs, strategy, **options)
        np.testing.assert_array_equal(step.sampled_from, expected)
        assert step.sampled_from.sum() == pytest.approx(1.0) and step.sampled_prob > 0
        assert step.sampled_prob == step.sampled_from[step.token_id] and step.prob == step.probs[step.token_id]
        if strategy == "top_k":
            assert np.count_nonzero(step.sampled_from) == 5
            assert set(np.flatnonzero(step.sampled_from)) == set(np.argsort(-step.probs)[:5])


@settings(max_examples=examples(12), deadline=None)
@given(st.integers(0, 40), st.sampled_from(SOURCES), st.integers(0, 1000))
def test_every_degenerate_setting_is_greedy(model_seed, src, sample_seed):
    model = small_model(model_seed)
    greedy = generate(model, src, max_len=5)
    same = [generate(model, src, "top_k", max_len=5, k=1, seed=sample_seed),
            generate(model, src, "temperature", max_len=5, temperature=1e-6, seed=sample_seed),
            generate(model, src, "top_p", max_len=5, p=1e-9, seed=sample_seed)]
    for g in same:
        assert g.token_ids == greedy.token_ids
        assert g.logprob == pytest.approx(greedy.logprob, abs=1e-12)
    beam = beam_search(model, src, width=1, max_len=5)
    assert beam.best.token_ids == greedy.token_ids and len(beam.hypotheses) == 1
    assert beam.best.logprob == pytest.approx(greedy.logprob, abs=1e-12)
    assert beam.best.score == pytest.approx(greedy.score(), abs=1e-12)


def test_same_seed_same_text_and_other_seeds_differ(small):
    texts = [generate(small, "Hello World", "temperature", max_len=6, temperature=2.0, seed=s).text for s in range(8)]
    again = [generate(small, "Hello World", "temperature", max_len=6, temperature=2.0, seed=s).text for s in range(8)]
    assert texts == again and len(set(texts)) > 1


def test_sampling_draws_follow_the_distribution(hello):
    """Over many seeds, the first token's frequencies approach the sampled distribution."""
    draws = [generate(hello, "Hello World", "top_k", max_len=1, k=3, seed=s).steps[0] for s in range(400)]
    dist = draws[0].sampled_from
    counts = np.bincount([d.token_id for d in draws], minlength=len(dist)) / len(draws)
    np.testing.assert_allclose(counts, dist, atol=0.06)
    assert np.all(counts[dist == 0] == 0)


# --- beam search --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("width", [1, 2, 3, 5])
@pytest.mark.parametrize("alpha, norm", [(0.0, "plain"), (0.6, "plain"), (1.0, "gnmt")])
def test_the_beam_tree_is_consistent(small, width, alpha, norm):
    model = with_eos_bias(small, 3.0)  # some sentences finish, some run to max_len
    b = beam_search(model, "the cat sat on the mat", width=width, max_len=6, alpha=alpha, length_norm=norm)
    if width > 1:
        assert {h.finished for h in b.hypotheses} == {True, False}
    root = b.nodes[0]
    assert (root.parent, root.step, root.token, root.cum_logprob, root.kept) == (None, 0, SOS, 0.0, True)
    for i, node in enumerate(b.nodes[1:], start=1):
        parent = b.nodes[node.parent]
        assert node.id == i and parent.id < node.id and parent.kept and not parent.finished
        assert node.step == parent.step + 1
        assert node.cum_logprob == pytest.approx(parent.cum_logprob + node.logprob, abs=1e-12)
        assert node.score == pytest.approx(node.cum_logprob / length_penalty(node.step, alpha, norm))
        assert node.finished == (node.token == EOS)
    finished_before = 0
    for step in range(1, 7):
        kept = [n for n in b.at_step(step) if n.kept]
        assert len(kept) + finished_before <= width
        pruned = [n for n in b.at_step(step) if not n.kept]
        assert all(p.cum_logprob <= min(k.cum_logprob for k in kept) for p in pruned)
        finished_before += sum(n.finished for n in kept)
    scores = [h.score for h in b.hypotheses]
    assert scores == sorted(scores, reverse=True) and b.best.score == max(scores)
    assert len(b.hypotheses) <= width and all(b.nodes[h.node].kept for h in b.hypotheses)


def test_beam_logprobs_are_the_models(small):
    b = beam_search(small, "good morning", width=3, max_len=4)
    for node in b.nodes[1:]:
        prefix = [n.token_id for n in b.path(node.parent)]
        probs = small.run_ids(small.vocab.encode("good morning")[0], prefix)["probs"][-1]
        assert math.exp(node.logprob) == pytest.approx(probs[node.token_id], rel=1e-9)
        children = b.children(node.parent)  # a parent proposes its most likely tokens, most likely first
        assert [c.token_id for c in children] == list(np.argsort(-probs, kind="stable")[:len(children)])


def test_hypotheses_spell_their_paths(small):
    b = beam_search(with_eos_bias(small, 1.5), "Hello World", width=4, max_len=5)
    for h in b.hypotheses:
        path = b.path(h.node)
        assert path[0].token == SOS and h.token_ids == tuple(n.token_id for n in path[1:])
        assert h.logprob == path[-1].cum_logprob and h.finished == (h.tokens[-1] == EOS)
        assert h.text == " ".join(t for t in h.tokens if t != EOS)


def test_length_normalisation():
    assert length_penalty(4, 0.5) == 2.0 and length_penalty(0, 0.6) == 1.0
    assert length_penalty(1, 0.6, "gnmt") == 1.0 and length_penalty(7, 1.0, "gnmt") == 2.0
    assert sequence_score(-6.0, 4, 0.5) == -3.0 and sequence_score(-6.0, 4, 0.0) == -6.0


def test_log_softmax_does_not_underflow():
    logits = np.array([0.0, -800.0])
    np.testing.assert_allclose(log_softmax(logits), [0.0, -800.0])
    assert with_temperature(logits, 1.0)[1] == 0.0  # where log(probs) would be -inf


def test_greedy_and_beam_disagree_on_the_documented_example():
    model, greedy, beam = disagreement_example()
    assert model.config.d_model == 16 and DISAGREEMENT["src"] == "the cat sat on the mat"
    assert greedy.tokens == ("the", "the", EOS) and greedy.finished
    assert beam.best.tokens == ("soy", EOS) and beam.best.finished
    np.testing.assert_allclose([s.prob for s in greedy.steps], [0.0365, 0.0443, 0.0436], atol=5e-5)
    np.testing.assert_allclose([greedy.logprob, greedy.score(0.6)], [-9.5594, -4.9449], atol=5e-5)
    np.testing.assert_allclose([beam.best.logprob, beam.best.score], [-6.3210, -4.1703], atol=5e-5)
    first = greedy.steps[0].probs
    the, soy = model.vocab.id("the"), model.vocab.id("soy")
    assert first[the] > first[soy]  # greedy's first choice is better ...
    assert beam.best.logprob > greedy.logprob  # ... but the beam's sentence is more likely as a whole
    for width in (2, 3, 4, 5):
        for alpha in (0.0, 0.6):
            b = beam_search(model, DISAGREEMENT["src"], width=width, max_len=8, alpha=alpha)
            assert b.best.tokens == ("soy", EOS) and b.best.score > greedy.score(alpha)


# --- arguments ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("options, message", [
    ({"strategy": "nucleus"}, "strategy must be one of greedy, temperature, top_k, top_p"),
    ({"strategy": "beam"}, "beam search has its own function"),
    ({"strategy": "temperature", "temperature": 0}, "temperature must be a number greater than 0"),
    ({"strategy": "temperature", "temperature": -1.0}, "temperature must be a number greater than 0"),
    ({"strategy": "temperature", "temperature": float("nan")}, "temperature must be a number greater than 0"),
    ({"strategy": "greedy", "temperature": 0.5}, "greedy always takes the most likely token"),
    ({"strategy": "top_k"}, "k must be a whole number from 1 to the vocabulary size (11), got None"),
    ({"strategy": "top_k", "k": 0}, "k must be a whole number from 1"),
    ({"strategy": "top_k", "k": 12}, "vocabulary size (11), got 12"),
    ({"strategy": "top_k", "k": 2.5}, "k must be a whole number"),
    ({"strategy": "top_p"}, "p must be a number greater than 0 and at most 1, got None"),
    ({"strategy": "top_p", "p": 0}, "p must be a number greater than 0 and at most 1"),
    ({"strategy": "top_p", "p": 1.01}, "p must be a number greater than 0 and at most 1"),
    ({"strategy": "greedy", "k": 3}, "k is used only by the top_k strategy, not by greedy"),
    ({"strategy": "top_k", "k": 3, "p": 0.5}, "p is used only by the top_p strategy"),
    ({"max_len": 0}, "max_len (the most tokens to generate) must be a whole number from 1"),
    ({"max_len": 129}, "max_len (128), got 129"),
    ({"max_len": True}, "max_len"),
])
def test_bad_generation_arguments_are_explained(hello, options, message):
    with pytest.raises(ValueError) as error:
        generate(hello, "Hello World", **options)
    assert message in str(error.value)


@pytest.mark.parametrize("options, message", [
    ({"width": 0}, "the beam width must be a whole number from 1 to 5, got 0"),
    ({"width": 6}, "from 1 to 5, got 6"),
    ({"max_len": 0}, "max_len (the most tokens to generate)"),
    ({"alpha": -0.1}, "alpha (the length normalisation exponent) must be a number >= 0"),
    ({"length_norm": "google"}, "length_norm must be one of plain, gnmt"),
])
def test_bad_beam_arguments_are_explained(hello, options, message):
    with pytest.raises(ValueError) as error:
        beam_search(hello, "Hello World", **options)
    assert message in str(error.value)


def test_empty_source_and_non_finite_numbers_are_refused(hello):
    with pytest.raises(ValueError, match="source sentence is empty"):
        generate(hello, "")
    broken = hello.with_params({"unembed.b": np.full(len(hello.vocab), np.nan)})
    with pytest.raises(ValueError, match="not finite numbers .* so no token can be chosen"):
        generate(broken, "Hello World")
    with pytest.raises(ValueError, match="not finite numbers"):
        beam_search(broken, "Hello World")


# --- command line -------------------------------------------------------------------------------------------

def run_main(capsys, *args):
    code = main(["generate", *args])
    return code, json.loads(capsys.readouterr().out)


def test_cli_greedy_prints_tokens_text_and_steps(capsys):
    code, out = run_main(capsys, "--preset", "hello-world", "--max-len", "3")
    assert code == 0 and out["strategy"] == "greedy" and out["tokens"] == ["c", "?", "c"]
    assert out["text"] == "c ? c" and out["finished"] is False
    assert [s["prefix"] for s in out["steps"]] == [["SOS"], ["SOS", "c"], ["SOS", "c", "?"]]
    np.testing.assert_allclose(out["steps"][0]["prob"], 0.27733050, atol=1e-8)


def test_cli_sampling_is_reproducible(capsys):
    args = ("--preset", "hello-world", "--strategy", "top_p", "--p", "0.95", "--temperature", "3",
            "--sample-seed", "7", "--max-len", "5")
    _, first = run_main(capsys, *args)
    _, second = run_main(capsys, *args)
    model = engine.preset("hello-world")
    expected = generate(model, "Hello World", "top_p", max_len=5, temperature=3.0, p=0.95, seed=7)
    assert first == second and first["tokens"] == list(expected.tokens)
    assert first["settings"] == {"max_len": 5, "temperature": 3.0, "k": None, "p": 0.95, "seed": 7, "force_end": False}


def test_cli_beam_prints_hypotheses_and_tree(capsys):
    d = DISAGREEMENT
    settings_ = [a for field, value in d["overrides"].items() for a in ("--set", f"{field}={value}")]
    code, out = run_main(capsys, "--preset", d["preset"], *settings_, "--seed", str(d["seed"]), "--src", d["src"],
                         "--strategy", "beam", "--width", "3", "--max-len", "8")
    assert code == 0 and out["tokens"] == ["soy", "EOS"] and out["text"] == "soy"
    assert out["hypotheses"][0]["tokens"] == ["soy", "EOS"] and out["settings"]["alpha"] == 0.6
    np.testing.assert_allclose(out["score"], -4.1703, atol=5e-5)
    assert out["nodes"][0]["token"] == "SOS" and {"parent", "kept", "cum_logprob"} <= set(out["nodes"][1])


@pytest.mark.parametrize("args, message", [
    (["--strategy", "beam", "--k", "3"], "--k does not apply to --strategy beam"),
    (["--strategy", "greedy", "--width", "2"], "--width does not apply to --strategy greedy"),
    (["--sample-seed", "3"], "--sample-seed does not apply to --strategy greedy"),
    (["--strategy", "top_p", "--p", "1.5"], "p must be a number greater than 0 and at most 1"),
    (["--strategy", "beam", "--width", "9"], "the beam width must be a whole number from 1 to 5"),
    (["--strategy", "top_k"], "k must be a whole number from 1"),
    (["--strategy", "sample"], "invalid choice"),
    (["--temperature", "warm"], "invalid float value"),
])
def test_cli_bad_options_print_one_line_and_exit_2(capsys, args, message):
    with pytest.raises(SystemExit) as exit_:
        main(["generate", "--preset", "hello-world", *args])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and message in err and err.count("\n") == 1


def test_cli_runs_as_a_module():
    result = subprocess.run([sys.executable, "-m", "engine", "generate", "--preset", "hello-world", "--strategy",
                             "beam", "--width", "2", "--max-len", "2"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and json.loads(result.stdout)["tokens"] == ["c", "?"]
