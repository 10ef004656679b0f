"""The forward pass runs only as far as the steps that are read, and a trace shared by threads stays right."""
import gc
import weakref
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import engine
from engine import attention

SRC, TGT = "Hello World", "hola mundo"


@pytest.fixture
def projections(monkeypatch):
    """The names of the Q, K, V projections the forward pass has computed so far."""
    done, project = [], attention.project

    def counted(x, W, *args):
        done.append(W.shape)
        return project(x, W, *args)

    monkeypatch.setattr(attention, "project", counted)
    return done


def test_reading_the_first_encoder_layer_runs_no_decoder(projections):
    model = engine.preset("paper")
    trace = model.run(SRC, TGT)
    assert projections == []  # nothing runs before a step is read
    trace["enc.0.attn.weights"]
    assert len(projections) == 3  # Q, K and V of encoder layer 0; not the 5 other layers, not the decoder
    trace["dec.0.self_attn.q"]
    assert len(projections) == 3 * 6 + 3  # the encoder, then the decoder's first projections
    assert list(trace)[-1] == "probs" and len(projections) == 3 * (6 + 6 * 2)


def test_a_lazily_read_step_equals_the_whole_pass():
    model = engine.preset("hello-world")
    whole = model.run(SRC, TGT)
    eager = {name: whole[name] for name in whole}  # iterating runs the pass to its end first
    lazy = model.run(SRC, TGT)
    for name in reversed(list(eager)):  # the last step first: it runs everything before it
        np.testing.assert_array_equal(lazy[name], eager[name])
    assert list(lazy) == list(eager)


def test_threads_reading_one_trace_see_the_same_numbers():
    model = engine.preset("paper", n_layers=2)
    reference = model.run(SRC, TGT)
    names = list(reference)
    for _ in range(5):
        shared = model.run(SRC, TGT)
        with ThreadPoolExecutor(8) as pool:  # each thread asks for a different later step at once
            read = list(pool.map(lambda name: shared[name], names[::-7] + names[::5]))
        for name, value in zip(names[::-7] + names[::5], read):
            np.testing.assert_array_equal(value, reference[name])
        assert list(shared) == names


@pytest.mark.parametrize("read", ["enc.0.attn.q", "probs"])
def test_a_dropped_trace_frees_its_arrays_at_once(read):
    """No reference cycle holds a pass, whole or left half-way: its arrays (megabytes at the paper's sizes) go with
    the trace, not at the garbage collector's next cycle search."""
    trace = engine.preset("hello-world").run(SRC, TGT)
    gc.disable()
    try:
        value = weakref.ref(trace[read])
        del trace
        assert value() is None
    finally:
        gc.enable()


def test_nonfinite_through_a_step_looks_no_further():
    model = engine.preset("hello-world")
    param = "enc.0.ffn.W_1"
    trace = model.with_params({param: np.full(model.params[param].shape, 1e300)}).run(SRC)
    assert trace.nonfinite_through("enc.0.attn.weights") == ()
    assert trace.nonfinite_through("enc.0.ln2") == ("enc.0.ln2",)
    assert trace.nonfinite_through("probs") == trace.nonfinite
    assert trace.nonfinite[0] == "enc.0.ln2" and len(trace.nonfinite) > 1


def test_a_parameter_is_resolved_without_running_the_pass(projections):
    trace = engine.preset("hello-world").run(SRC)
    assert trace.resolve("enc.0.attn.W_Q") is trace.model.params["enc.0.attn.W_Q"]
    assert projections == []


def test_changed_cells_give_the_model_with_those_weights():
    model = engine.preset("paper", n_layers=2)
    cells = {"enc.0.attn.W_Q": [((1, 2, 3), 0.5), ((7, 511, 63), -2.0)], "enc.1.ffn.W_1": [((4, 5), 9.0)]}
    changed = model.with_cells(cells)
    expected = {}
    for name, changes in cells.items():
        expected[name] = np.array(model.params[name])
        for index, value in changes:
            expected[name][index] = value
    reference = model.with_params(expected)
    for name in model.params:
        np.testing.assert_array_equal(changed.params[name], reference.params[name])
        assert not changed.params[name].flags.writeable
    assert changed.params["enc.0.attn.W_K"] is model.params["enc.0.attn.W_K"]  # unchanged: shared, not copied
    np.testing.assert_array_equal(changed.run(SRC, TGT)["probs"], reference.run(SRC, TGT)["probs"])
    assert model.params["enc.0.attn.W_Q"][1, 2, 3] != 0.5  # the parent is untouched
