"""Exercises on live numbers: the post's eight questions as experiments with answers the engine computes, cells of
the current pass to compute by hand, the reading of a typed answer (a number, never evaluated) and a session's
progress as link text.

Codes and numbers only, as `ConfigError` does: the app words them. No Streamlit, so a class quiz can reuse it.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from .attention import softmax
from .presets import PRESETS, preset
from .tokens import split

# ---- compute it by hand: one question per kind, its cell picked by the set's number ------------------------------

KINDS = ("score", "scaled", "weight", "layer_norm", "prob", "pe")
MAX_SET = 999  # the question sets a link may name, from 1
ABS_TOL, REL_TOL = 0.005, 0.005  # a typed number is right within max(ABS_TOL, REL_TOL * |answer|)
MAX_ANSWER_CHARS = 40  # "-0.123456789012345e-05" fits; 10,000 characters do not
MAX_GIVEN = 16  # the numbers a question asks a learner to combine; beyond, it gives partial sums
NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d{1,3})?")
EXPRESSION = re.compile(r"[\d.)\s][\s]*[-+*/^×÷]|[()√]|\*\*")  # an operator after a number, brackets, a root
DECIMAL_COMMA = re.compile(r"[+-]?(\d+),(\d+)")  # "0,1353": a comma for a point, as much of Europe writes it
NOT_FINITE = {"nan", "+nan", "-nan", "inf", "+inf", "-inf", "infinity", "+infinity", "-infinity", "∞", "-∞"}
QUESTION_ID = re.compile(r"([a-z_]{1,12})-(\d{1,3})")


@dataclass(frozen=True)
class Question:
    """A cell of the pass to compute by hand: `given` holds the numbers the prompt shows (the kind's inputs), the
    answer is the trace's number, right within `tolerance`."""
    id: str  # "{kind}-{set}": the same state and set give the same cell
    kind: str
    step: str  # the trace step whose cell is asked
    index: tuple  # the cell, from 0
    given: dict = field(compare=False)
    answer: float = 0.0
    tolerance: float = 0.0


def question_id(kind: str, number: int) -> str:
    return f"{kind}-{number}"


def parse_question_id(text: str) -> tuple[str, int]:
    """(kind, set) of a question id; ValueError for anything else (a forged id)."""
    match = QUESTION_ID.fullmatch(text) if isinstance(text, str) else None
    if not match or match[1] not in KINDS or not 1 <= int(match[2]) <= MAX_SET:
        raise ValueError(text)
    return match[1], int(match[2])


def question_set(trace, number: int) -> list[Question]:
    """The set's questions the model has a cell with a finite answer for (a learned or absent positional encoding
    has no formula; numbers that overflow have no answer)."""
    return [q for q in (question(trace, question_id(kind, number)) for kind in KINDS) if q is not None]


def overflowing(trace, number: int) -> list[str]:
    """The kinds of the set whose cell has no finite answer in this pass (not asked)."""
    return [kind for kind in KINDS if _made(trace, question_id(kind, number)) is not None
            and question(trace, question_id(kind, number)) is None]


def question(trace, qid: str) -> Question | None:
    """The question an id names in this pass, or None where the model has no such cell; ValueError: a forged id."""
    kind = parse_question_id(qid)[0]
    made = _made(trace, qid)
    if made is None:
        return None
    step, index, given = made
    answer = float(trace[step][index])
    if not math.isfinite(answer):  # numbers that overflow: no answer to type (question_set says how many)
        return None
    return Question(qid, kind, step, index, given, answer, tolerance(answer))


def _made(trace, qid: str):
    """The cell an id names in this pass (step, index, the numbers given), or None where the model has none."""
    kind, number = parse_question_id(qid)
    return MAKERS[kind](trace, np.random.default_rng([KINDS.index(kind), number]))


def tolerance(answer: float) -> float:
    return max(ABS_TOL, REL_TOL * abs(answer))


def first_attention(config) -> str:
    """The first attention block: the encoder's, or a decoder-only model's self-attention."""
    return "dec.0.self_attn" if config.decoder_only else "enc.0.attn"


def _attention(trace) -> str:
    return first_attention(trace.model.config)


def _head_cell(trace, rng, name):
    """A head, a query and a key the query sees (a causal block's query sees no later key)."""
    h, n_q, n_k = trace[name].shape
    i = int(rng.integers(n_q))
    causal = trace.model.config.decoder_only
    return int(rng.integers(h)), i, int(rng.integers(i + 1 if causal else n_k))


def _score(trace, rng):
    att = _attention(trace)
    h, i, j = _head_cell(trace, rng, f"{att}.scores")
    q, k = trace[f"{att}.q"][h, i], trace[f"{att}.k"][h, j]  # (d_k,) each
    cut = max(0, len(q) - MAX_GIVEN // 2)  # the products a learner adds: the rest come as their partial sum
    given = {"q": _row(q[cut:]), "k": _row(k[cut:])}
    if cut:
        given |= {"from": cut, "partial": float(q[:cut] @ k[:cut])}
    return f"{att}.scores", (h, i, j), given


def _scaled(trace, rng):
    att = _attention(trace)
    h, i, j = _head_cell(trace, rng, f"{att}.scaled")
    step = trace.step(f"{att}.scaled")
    return step.name, (h, i, j), {"score": float(trace[f"{att}.scores"][h, i, j]), "divisor": step.meta["divisor"]}


def _weight(trace, rng):
    att = _attention(trace)
    h, i, j = _head_cell(trace, rng, f"{att}.weights")
    softmax_input = trace.step(f"{att}.weights").inputs[0]  # the scaled scores, masked where the block masks
    return f"{att}.weights", (h, i, j), _softmax_given(trace[softmax_input][h, i], j, "row")


def _softmax_given(row, column: int, name: str) -> dict:
    """What a softmax cell needs: the row, or where it is longer than MAX_GIVEN the cell's input, the row's largest
    and Σ exp(x − max) (a masked −∞ adds 0)."""
    if len(row) <= MAX_GIVEN:
        return {name: _row(row), "column": column}
    largest = float(row.max())
    return {"column": column, "value": float(row[column]), "max": largest,
            "sum_exp": float(np.exp(row - largest).sum()), "width": len(row)}


def _layer_norm(trace, rng):
    name = ("dec" if trace.model.config.decoder_only else "enc") + ".0.ln1"
    step = trace.step(name)
    n, d_model = step.shape
    i, j = int(rng.integers(n)), int(rng.integers(d_model))
    x_ref, gamma_ref, beta_ref = step.inputs
    x = trace[x_ref][i]  # (d_model,)
    given = {"x": _row(x)} if d_model <= MAX_GIVEN else {"x_j": float(x[j]), "mean": float(x.mean()),
                                                         "variance": float(x.var())}
    return name, (i, j), {**given, "column": j, "gamma": float(trace.resolve(gamma_ref)[j]),
                          "beta": float(trace.resolve(beta_ref)[j]), "eps": step.meta["eps"],
                          "form": step.meta["form"]}


def _probability(trace, rng):
    """A position's most likely next token: a probability large enough to be worth computing."""
    probs = trace["probs"]  # (n, vocab)
    i = int(rng.integers(probs.shape[0]))
    v = int(np.argmax(probs[i]))
    return "probs", (i, v), {**_softmax_given(trace["masked_logits"][i], v, "logits"),
                             "token": trace.model.vocab.tokens[v]}


def _pe(trace, rng):
    name = "tgt.pos" if trace.model.config.decoder_only else "src.pos"
    step = trace.step(name)
    if step.meta["form"] not in ("sinusoidal", "blog", "blog_table"):
        return None  # learned rows or none: nothing to compute
    n, d_model = step.shape
    pos, j = int(rng.integers(n)), int(rng.integers(d_model))
    return name, (pos, j), {"pos": pos, "column": j, "d_model": d_model, "form": step.meta["form"]}


def _row(values) -> tuple:
    return tuple(float(x) for x in values)


MAKERS = {"score": _score, "scaled": _scaled, "weight": _weight, "layer_norm": _layer_norm, "prob": _probability,
          "pe": _pe}


# ---- reading and checking a typed answer --------------------------------------------------------------------------

class Verdict(NamedTuple):
    """What a typed answer is: `code` "right", "wrong", or why it is not an answer ("empty", "too_long",
    "not_finite", "expression", "not_a_number", "ambiguous_comma"); `value` the number read, if any."""
    code: str
    value: float | None = None

    @property
    def right(self) -> bool:
        return self.code == "right"

    @property
    def answered(self) -> bool:
        return self.code in ("right", "wrong")


def read_number(text) -> Verdict:
    """A typed number as a Verdict with the value (code "wrong" until checked), or why it is not one. The text is
    matched against a number's form and given to float(); nothing in it is evaluated. A decimal comma is read as a
    point where it cannot be a thousands separator ("0,1353", "2,5"); "1,353" is refused as ambiguous."""
    if not isinstance(text, str) or not text.strip():
        return Verdict("empty")
    if len(text) > MAX_ANSWER_CHARS:
        return Verdict("too_long")
    cleaned = text.strip().replace("−", "-").replace(" ", "")
    comma = DECIMAL_COMMA.fullmatch(cleaned)
    if comma and comma[1] != "0" and len(comma[2]) == 3:  # "1,353": a thousands separator or a decimal comma
        return Verdict("ambiguous_comma")
    cleaned = cleaned.replace(",", ".") if comma else cleaned
    if cleaned.lower() in NOT_FINITE:
        return Verdict("not_finite")
    if not NUMBER.fullmatch(cleaned):
        return Verdict("expression" if EXPRESSION.search(cleaned) else "not_a_number")
    value = float(cleaned)
    return Verdict("wrong", value) if math.isfinite(value) else Verdict("not_finite")


def check_number(answer: float, tolerance_: float, text) -> Verdict:
    read = read_number(text)
    if read.value is None:
        return read
    return Verdict("right" if abs(read.value - answer) <= tolerance_ else "wrong", read.value)


def check(q: Question, text) -> Verdict:
    return check_number(q.answer, q.tolerance, text)


# ---- the post's exercises: each an experiment whose answer the engine computes -----------------------------------

POST_EXERCISES = ("positions", "attentions", "d_k", "ffn", "decoder_passes", "residual", "probabilities", "greedy")
CHOICES = {"positions": ("same", "different"), "d_k": ("one_hot", "uniform"), "residual": ("with_x", "alone"),
           "greedy": ("yes", "no")}
SATURATION_D_K = (1, 4, 64, 256)  # the widths the d_k exercise compares, scaled by √d_k and not
SATURATION_SAMPLES = 4000  # random rows of scores per width: the averages move by < 0.01 between seeds
ROUNDING = 1e-9  # a difference below it is rounding: the same vector
GENERATED = 6  # tokens the decoder may write in the generation exercises
BEAM_WIDTH = 3


class Answer(NamedTuple):
    """A post exercise's right answer: a number (exact), a choice's code or a token, and the engine's numbers its
    explanation names."""
    form: str  # "number", "choice" or "token"
    value: object
    evidence: dict


def post_exercise_id(key: str) -> str:
    return f"post-{POST_EXERCISES.index(key) + 1}"


def order_blindness(model, src: str) -> Answer:
    """Without positional encoding, is each word's encoder output the same when the words are reversed (moved to
    another row)? The largest difference with and without PE."""
    gaps = {label: float(np.abs(reordered(m, src)["difference"]).max())
            for label, m in (("without_pe", model.without_positions()), ("with_pe", _with_positions(model)))}
    same = gaps["without_pe"] <= ROUNDING
    return Answer("choice", "same" if same else "different", {**gaps, "reversed": " ".join(reversed(split(src)))})


def reordered(model, src: str) -> dict:
    """The encoder's output (a decoder-only model's last stack's) for the source and for its words reversed, each row
    labelled by its word, and each word's row in the reversed order less its row in the source's order."""
    words = split(src)
    backwards = list(reversed(words))
    out = "dec.out" if model.config.decoder_only else "enc.out"
    n = len(words)
    before, after = model.run(src)[out][:n], model.run(" ".join(backwards))[out][:n]  # (n, d_model) each
    return {"words": tuple(words), "before": before, "reversed_words": tuple(backwards), "after": after,
            "difference": after[::-1] - before}  # (n, d_model): word i's row in both orders
def _with_positions(model):
    """The model, or where it has no positional encoding (the exercise turned it off), its preset's from its seed."""
    if model.config.pos_encoding != "none":
        return model
    return preset(model.name, seed=model.seed, **{**model.config.as_dict(),
                                                  "pos_encoding": PRESETS[model.name].pos_encoding})


def cross_attention_keys(trace) -> Answer | None:
    """How many keys (columns) a cross-attention row has: the source's tokens, where self-attention's are the
    decoder's own. None for a decoder-only model, which has no cross-attention."""
    if trace.model.config.decoder_only:
        return None
    cross, own = trace["dec.0.cross_attn.weights"].shape, trace["dec.0.self_attn.weights"].shape  # (h, n_q, n_k)
    return Answer("number", cross[-1], {"cross": cross, "self": own, "n_src": len(trace.src_tokens),
                                        "n_tgt": len(trace.tgt_tokens)})


def saturation(n_keys: int, samples: int = SATURATION_SAMPLES, seed: int = 0) -> Answer:
    """Scores of random queries and keys whose entries have mean 0 and variance 1 (the spread a trained model's are
    initialised near), for d_k in SATURATION_D_K: a score is a sum of d_k products, so its spread (standard
    deviation) is about √d_k unscaled and about 1 divided by √d_k; and softmax's largest weight of a row of n_keys
    such scores, averaged. Is a row at d_k = 256 unscaled nearer one-hot (1) or uniform (1/n_keys)?"""
    rng = np.random.default_rng(seed)
    table = {}
    for d_k in SATURATION_D_K:
        q = rng.standard_normal((samples, 1, d_k))  # (samples, 1, d_k)
        k = rng.standard_normal((samples, n_keys, d_k))  # (samples, n_keys, d_k)
        scores = (q * k).sum(axis=-1)  # (samples, n_keys)
        for divisor, scaled in ((1.0, scores), ("sqrt_dk", scores / math.sqrt(d_k))):
            peak = float(softmax(scaled).max(axis=-1).mean())  # softmax's largest weight of a row, averaged
            table[(d_k, divisor)] = {"spread": float(scaled.std()), "peak": peak}
    peak = table[(SATURATION_D_K[-1], 1.0)]["peak"]
    return Answer("choice", "one_hot" if peak > (1 + 1 / n_keys) / 2 else "uniform",
                  {"table": table, "uniform": 1 / n_keys, "samples": samples, "n_keys": n_keys})


def mean_row_max(trace, att: str) -> float:
    return float(trace[f"{att}.weights"].max(axis=-1).mean())  # (h, n_q) -> one number


def ffn_weights(model) -> Answer:
    """The numbers one feed-forward layer learns: W_1 (d_model × d_ff), b_1, W_2 (d_ff × d_model), b_2."""
    stack = "dec" if model.config.decoder_only else "enc"
    shapes = {name: model.params[f"{stack}.0.ffn.{name}"].shape for name in ("W_1", "b_1", "W_2", "b_2")
              if f"{stack}.0.ffn.{name}" in model.params}
    return Answer("number", sum(math.prod(s) for s in shapes.values()),
                  {"shapes": shapes, "d_model": model.config.d_model, "d_ff": model.config.d_ff})


def decoder_passes(written) -> Answer:
    """A greedy translation (an engine.generate.Generation of at most GENERATED tokens): the encoder runs once, the
    decoder once per token it writes."""
    decoder_only = written.steps[0].trace.model.config.decoder_only
    return Answer("number", len(written.steps), {"tokens": written.tokens, "finished": written.finished,
                                                 "encoder": 0 if decoder_only else 1})


def residual_effect(model, src: str, tgt: str) -> Answer:
    """With the residual off, is the first sub-layer's sum the sub-layer's output alone (no X added back)? Its
    distance from the sub-layer's output with the residual on and off, and the LayerNorm's row mean and spread."""
    att = first_attention(model.config)
    stack = att.split(".")[0]
    gaps, norms = {}, {}
    for label, on in (("on", True), ("off", False)):
        trace = model.with_residual(on).run(src, tgt)  # whichever the current model has
        gaps[label] = float(np.abs(trace[f"{stack}.0.add1"] - trace[f"{att}.out"]).max())  # (n, d_model)
        norms[label] = float(np.abs(trace[f"{stack}.0.ln1"].mean(axis=-1)).max())
    return Answer("choice", "alone" if gaps["off"] <= ROUNDING else "with_x", {"gaps": gaps, "norm_means": norms})


def next_token(trace) -> Answer:
    """The token the last position gives the highest probability, and the three most likely with theirs."""
    probs = trace["probs"][-1]  # (vocab,)
    top = np.argsort(-probs, kind="stable")[:3]
    tokens = trace.model.vocab.tokens
    return Answer("token", tokens[top[0]], {"top": tuple((tokens[v], float(probs[v])) for v in top),
                                            "logit": float(trace["masked_logits"][-1][top[0]])})


def greedy_optimal(greedy, beam) -> Answer:
    """Is greedy decoding's sentence (a Generation) the most probable one beam search (a BeamSearch of width
    BEAM_WIDTH, at most GENERATED tokens, ranked by log P: alpha 0) finds?"""
    best = max(beam.hypotheses, key=lambda h: h.logprob)
    # a forced end token counts log 1 in both, as transformers' processor makes it (engine/transformers_beam.py)
    logprob = greedy.logprob - (greedy.steps[-1].logprob if greedy.forced_end else 0.0)
    better = best.logprob > logprob + ROUNDING
    return Answer("choice", "no" if better else "yes", {"greedy": (greedy.tokens, logprob),
                                                        "beam": (best.tokens, best.logprob)})


def check_answer(answer: Answer, given) -> Verdict:
    """A post exercise's answer given: a number typed (exact: counts), a choice's code or a token typed."""
    if answer.form == "number":
        return check_number(float(answer.value), 0.0, given)
    if not isinstance(given, str) or not given.strip():
        return Verdict("empty")
    if len(given) > MAX_ANSWER_CHARS:
        return Verdict("too_long")
    if answer.form == "choice":
        return Verdict("right" if given == answer.value else "wrong")
    return Verdict("right" if given.strip().lower() == str(answer.value).lower() else "wrong")


# ---- progress in the link: "post-1:1,score-2:0" (an id, then 1 right or 0 wrong) ---------------------------------

MAX_PROGRESS = 100  # answered questions a link may hold
MAX_PROGRESS_CHARS = 2000


def known_id(text: str) -> bool:
    if text in {post_exercise_id(key) for key in POST_EXERCISES}:
        return True
    try:
        parse_question_id(text)
    except ValueError:
        return False
    return True


def encode_progress(progress: dict) -> str:
    return ",".join(f"{qid}:{int(right)}" for qid, right in sorted(progress.items()))


def decode_progress(text: str) -> tuple[dict, list]:
    """{id: right} from a link's text, and each part refused: an unknown or forged id, a result that is not 0 or 1,
    an id given twice, parts beyond MAX_PROGRESS (text beyond MAX_PROGRESS_CHARS is one refused part)."""
    if len(text) > MAX_PROGRESS_CHARS:
        return {}, [text[:40]]
    progress, refused = {}, []
    for i, part in enumerate(p for p in text.split(",") if p):
        qid, colon, result = part.partition(":")
        if i >= MAX_PROGRESS or not colon or result not in ("0", "1") or not known_id(qid) or qid in progress:
            refused.append(part[:40])
        else:
            progress[qid] = result == "1"
    return progress, refused
