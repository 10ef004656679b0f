"""Autoregressive generation: the decoder writes one token at a time, starting from SOS (seed 003, section 8).

    from engine.generate import generate, beam_search
    g = generate(model, "Hello World", strategy="top_p", p=0.9, seed=0)
    g.steps[0].trace          # the full forward pass that chose the first token
    g.steps[0].probs          # (V,) the model's next-token probabilities
    g.steps[0].sampled_from   # (V,) the distribution the token was drawn from
    g.tokens, g.text, g.finished
    b = beam_search(model, "Hello World", width=3, alpha=0.6)
    b.nodes, b.hypotheses, b.best

Each step's trace is the complete forward pass `model.run_ids(src_ids, prefix_ids)` on the prefix so far: the decoder
input grows by one token and the causal mask by one row and column, and every trace can be read like any other. The
trace is lazy, so it is computed only if a page reads it. The tokens themselves are chosen from incremental decoding
(engine/incremental.py): the encoder runs once, and each new token computes only its own decoder row, against the
keys and values the earlier positions left in a cache; its probabilities are the trace's last row up to rounding
(tests/test_incremental.py). Generation runs on token ids, not text, because a generated "<unk>" would be split into
three tokens if it were written out and read back.

Picking the most likely token every time (greedy) can miss a sentence that is more likely as a whole: a
first word with a slightly lower probability may lead to much more certain words after it. Beam search
keeps several sentences going at once; sampling trades some likelihood for variety.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from . import incremental
from .attention import softmax
from .config import ConfigError
from .loss import log_softmax
from .model import vocab_mask
from .presets import preset
from .tokens import EOS
from .trace import Trace
from .values import finite_number, read_only, whole

STRATEGIES = ("greedy", "temperature", "top_k", "top_p")
LENGTH_NORMS = ("plain", "gnmt")
MAX_WIDTH = 5

GREEDY_TEX = r"y_t = \arg\max_{w} P(w \mid y_{<t}, x)"
TEMPERATURE_TEX = r"P_T(w) = \frac{e^{z_w / T}}{\sum_{v} e^{z_v / T}}"
TOP_K_TEX = r"P_k(w) = \frac{P_T(w)\,[w \in \text{top-}k]}{\sum_{v \in \text{top-}k} P_T(v)}"
TOP_P_TEX = (r"\begin{gathered}P_p(w) = \frac{P_T(w)\,[w \in V_p]}{\sum_{v \in V_p} P_T(v)},\quad "
             r"V_p = \{w_{(1)}, \ldots, w_{(m)}\} \\ "
             r"P_T(w_{(1)}) \ge P_T(w_{(2)}) \ge \cdots,\quad "
             r"m = \min\Bigl\{j : \sum_{i \le j} P_T(w_{(i)}) \ge p\Bigr\}"
             r"\end{gathered}")
SCORE_TEX = {
    "plain": r"\text{score}(y) = \frac{\log P(y \mid x)}{|y|^{\alpha}}",
    "gnmt": r"\text{score}(y) = \frac{\log P(y \mid x)}{\left((5 + |y|) / 6\right)^{\alpha}}",
}

# Greedy and beam search disagree here (tests/test_generate.py pins the numbers). Greedy takes "the" first
# (P 0.0365 against 0.0337 for "soy"), but after "the" the model is unsure: it writes "the" again (P 0.0443, EOS
# 0.0397) and only then EOS, so "the the EOS" has P = 0.000071 (log P -9.559, score -4.945). The beam keeps "soy"
# too, after which EOS is likelier (0.0533): "soy EOS" has P = 0.0018 (log P -6.321, score -4.170), 25 times as
# likely. It is one token shorter, which alpha = 0.6 favours less than alpha = 0 does, yet it wins under both;
# widths 2 to 5 find it as well.
DISAGREEMENT = {
    "preset": "paper",
    "overrides": {"d_model": 16, "n_heads": 2, "d_ff": 32, "n_layers": 1},
    "seed": 2314,
    "src": "the cat sat on the mat",
    "width": 3,
    "max_len": 8,
    "alpha": 0.6,
}


@dataclass(frozen=True)
class GenerationStep:
    """One iteration of the loop: a forward pass on the prefix, and the token chosen after it."""
    prefix_ids: tuple  # the decoder input, SOS first
    prefix_tokens: tuple
    trace: Trace  # the full forward pass on (src, prefix), lazy
    logits: np.ndarray  # (V,) the last row of trace["masked_logits"] (-inf for <unk>), decoded incrementally
    probs: np.ndarray  # (V,) the model's next-token probabilities: the last row of trace["probs"], likewise
    sampled_from: np.ndarray  # (V,) the distribution the token was drawn from, after temperature/top-k/top-p (or
    # all on the end token where it was forced)
    token_id: int
    token: str
    prob: float  # the model's probability of the chosen token, probs[token_id]
    logprob: float  # its log, computed from the logits (log-softmax) so that it never rounds to log 0
    sampled_prob: float  # its probability in sampled_from


@dataclass(frozen=True)
class Generation:
    """The generated sentence, step by step."""
    src: str
    strategy: str
    settings: dict  # the arguments that shaped it: max_len, temperature, k, p, seed, force_end
    steps: tuple  # GenerationStep, one per generated token
    end: str = EOS  # the vocabulary's end-of-sentence token (Marian's is </s>)

    @property
    def token_ids(self) -> tuple:
        return tuple(s.token_id for s in self.steps)

    @property
    def tokens(self) -> tuple:
        """The generated tokens, the final EOS included when the model wrote it."""
        return tuple(s.token for s in self.steps)

    @property
    def text(self) -> str:
        return _text(self.tokens, self.end)

    @property
    def finished(self) -> bool:
        """True when the model wrote EOS; False when it ran into max_len first."""
        return bool(self.steps) and self.steps[-1].token == self.end

    @property
    def logprob(self) -> float:
        """log P(tokens | src) under the model (not under the sampled distributions)."""
        return float(sum(s.logprob for s in self.steps))

    @property
    def forced_end(self) -> bool:
        """Whether its last token was forced to be the end token (force_end, at max_len)."""
        return bool(self.settings["force_end"]) and len(self.steps) == self.settings["max_len"]

    def score(self, alpha: float = 0.6, length_norm: str = "plain") -> float:
        """The length-normalised log probability beam search ranks by, for comparing with it."""
        return sequence_score(self.logprob, len(self.steps), alpha, length_norm)


@dataclass(frozen=True)
class BeamNode:
    """One vertex of the beam tree: a prefix that was proposed at some step."""
    id: int
    parent: int | None  # None for the root, which is the start token
    step: int  # how many tokens this prefix has generated (0 for the root)
    token_id: int
    token: str
    logprob: float  # log P(token | parent's prefix, src)
    cum_logprob: float  # the parent's cum_logprob + logprob
    score: float  # cum_logprob normalised by the length penalty of `step`
    finished: bool  # the token is EOS, so this prefix is a complete sentence
    kept: bool  # it survived the cut at its step; pruned nodes are never extended


@dataclass(frozen=True)
class Hypothesis:
    """A sentence beam search ends with: a finished node, or a live one when max_len was reached."""
    node: int  # the id of its last node
    token_ids: tuple  # the generated tokens, SOS excluded, EOS included when finished
    tokens: tuple
    logprob: float
    score: float
    finished: bool
    end: str = EOS  # the vocabulary's end-of-sentence token

    @property
    def text(self) -> str:
        return _text(self.tokens, self.end)


@dataclass(frozen=True)
class BeamSearch:
    """The beam tree and the sentences it ended with, best (highest score) first."""
    src: str
    settings: dict  # width, max_len, alpha, length_norm
    nodes: tuple  # BeamNode, by id; nodes[0] is the root
    hypotheses: tuple  # Hypothesis, ranked by score

    @property
    def best(self) -> Hypothesis:
        return self.hypotheses[0]

    def path(self, node_id: int) -> list:
        """The nodes from the root down to node_id; their token ids are that prefix's decoder input."""
        return _path(self.nodes, node_id)

    def children(self, node_id: int) -> list:
        return [n for n in self.nodes if n.parent == node_id]

    def at_step(self, step: int) -> list:
        return [n for n in self.nodes if n.step == step]


def generate(model, src: str, strategy: str = "greedy", max_len: int = 10, temperature: float | None = None,
             k: int | None = None, p: float | None = None, seed: int = 0, force_end: bool = False) -> Generation:
    """Write tokens from SOS until EOS or max_len tokens, choosing each one by `strategy`.

    greedy: the most likely token. temperature: sample from softmax(logits / T). top_k: sample among the k
    most likely tokens. top_p: sample among the fewest most likely tokens whose probabilities add up to p.
    `temperature` (default 1) also applies before top_k and top_p. Sampling draws from
    np.random.default_rng(seed), so the same arguments give the same sentence. force_end: the max_len-th token is
    the end token whatever the model says, as transformers' forced_eos_token_id makes a Marian translation end.
    """
    _check_strategy(model, strategy, max_len, temperature, k, p)
    settings = {"max_len": max_len, "temperature": temperature, "k": k, "p": p, "seed": seed, "force_end": force_end}
    rng = np.random.default_rng(seed)
    src_ids, unknown = _encode_src(model, src)
    prefix, steps, end = [model.start_id], [], model.vocab.end
    trace = model.run_ids(src_ids, prefix, unknown)
    cache, scores = incremental.begin(model, trace)  # the encoder, once
    while True:
        forced = force_end and len(steps) == max_len - 1
        steps.append(_step(model, prefix, trace, scores, rng, strategy, temperature, k, p, forced))
        prefix.append(steps[-1].token_id)
        if len(steps) == max_len or steps[-1].token == end:
            return Generation(src, strategy, settings, tuple(steps), end)
        trace = model.run_ids(src_ids, prefix, unknown)  # lazy: run only if a page reads it
        cache, scores = incremental.read(model, cache, prefix[-1])


def _step(model, prefix, trace, scores, rng, strategy, temperature, k, p, forced) -> GenerationStep:
    logits, probs = _checked(scores, trace)  # (V,), (V,)
    if forced:
        dist = _one_hot(len(probs), model.vocab.id(model.vocab.end))  # (V,) the end token, surely
    else:
        dist = sampling_distribution(logits, probs, strategy, temperature, k, p)  # (V,)
    token_id = int(np.argmax(dist)) if strategy == "greedy" else int(rng.choice(len(dist), p=dist))
    return GenerationStep(tuple(prefix), trace.tgt_tokens, trace, logits, probs, dist, token_id,
                          model.vocab.tokens[token_id], float(probs[token_id]),
                          float(log_softmax(logits)[token_id]), float(dist[token_id]))


def sampling_distribution(logits, probs, strategy, temperature=None, k=None, p=None) -> np.ndarray:
    """The distribution a strategy draws the next token from; greedy takes its largest entry."""
    if strategy == "greedy":
        return read_only(probs)
    dist = with_temperature(logits, 1.0 if temperature is None else temperature)  # (V,)
    if strategy == "top_k":
        dist = top_k_filter(dist, k)
    elif strategy == "top_p":
        dist = top_p_filter(dist, p)
    return read_only(dist)


def with_temperature(logits, temperature: float) -> np.ndarray:
    """softmax(z / T): T < 1 sharpens the distribution towards the top token, T > 1 flattens it.

    The largest logit is subtracted before dividing, so even a tiny T cannot overflow (it gives 0, not NaN)."""
    z = np.asarray(logits, dtype=float)  # (V,)
    with np.errstate(over="ignore"):
        return softmax((z - z.max()) / temperature)  # (V,)


def top_k_filter(probs, k: int) -> np.ndarray:
    """Keep the k most likely tokens (ties go to the lower id) and renormalise; the rest become exactly 0."""
    order = np.argsort(-probs, kind="stable")  # (V,) most likely first
    return _keep(probs, order[:k])


def top_p_filter(probs, p: float) -> np.ndarray:
    """Keep the fewest most likely tokens whose probabilities add up to at least p, and renormalise."""
    order = np.argsort(-probs, kind="stable")  # (V,)
    cumulative = np.cumsum(probs[order])  # (V,)
    count = min(int(np.searchsorted(cumulative, p, side="left")) + 1, len(probs))
    return _keep(probs, order[:count])


def _one_hot(size, token_id) -> np.ndarray:
    dist = np.zeros(size)  # (V,)
    dist[token_id] = 1.0
    return read_only(dist)


def _keep(probs, ids) -> np.ndarray:
    kept = np.zeros_like(probs)  # (V,)
    kept[ids] = probs[ids]
    return kept / kept.sum()  # (V,)


def beam_search(model, src: str, width: int = 3, max_len: int = 10, alpha: float = 0.6,
                length_norm: str = "plain") -> BeamSearch:
    """Keep the `width` most likely prefixes at every step; return the tree and its sentences, best first.

    At each step every live prefix proposes its most likely children (as many as there are places left: no
    other child could make the cut) and the most likely proposals, by cumulative log probability, are kept.
    A kept child that is EOS is a finished sentence and keeps its place for good, so the beam narrows as
    sentences finish. The search stops when no prefix is live or max_len tokens were written. The finished
    sentences, and the prefixes still live at max_len, are ranked by a length-normalised score (SCORE_TEX):
    "plain" is log P / |y|^alpha, "gnmt" is GNMT's log P / ((5 + |y|) / 6)^alpha; |y| counts EOS. alpha = 0
    ranks by log P alone, which favours short sentences; alpha = 1 ranks by the average log probability
    per token. Width 1 is greedy decoding. Each live prefix keeps its decoder's cache (engine/incremental.py); a
    kept child continues from its parent's.
    """
    _check_beam(model, width, max_len, alpha, length_norm)
    src_ids, unknown = _encode_src(model, src)
    start = model.start_id
    nodes = [BeamNode(0, None, 0, start, model.vocab.tokens[start], 0.0, 0.0, 0.0, False, True)]
    live, finished, decoders = [nodes[0]], [], {0: decoder_start(model, src_ids, unknown)}
    while live and live[0].step < max_len:
        decoders = decoders_of(model, live, decoders)
        places = width - len(finished)
        proposals = [pair for node in live
                     for pair in _proposals(model, src_ids, unknown, nodes, node, decoders[node.id][1], places)]
        new = [_child(len(nodes) + i, parent, token_id, logprob, model, alpha, length_norm)
               for i, (parent, token_id, logprob) in enumerate(proposals)]
        kept = {n.id for n in sorted(new, key=lambda n: -n.cum_logprob)[:places]}  # stable: ties keep the order
        nodes += [dataclasses.replace(n, kept=n.id in kept) for n in new]
        finished += [nodes[i] for i in sorted(kept) if nodes[i].finished]
        live = [nodes[i] for i in sorted(kept) if not nodes[i].finished]
    ends = sorted(finished + live, key=lambda n: -n.score)
    settings = {"width": width, "max_len": max_len, "alpha": alpha, "length_norm": length_norm}
    return BeamSearch(src, settings, tuple(nodes), tuple(_hypothesis(nodes, n, model.vocab.end) for n in ends))


def disagreement_example():
    """(model, greedy Generation, BeamSearch) for DISAGREEMENT: the same sentence, two different answers."""
    d = DISAGREEMENT
    model = preset(d["preset"], seed=d["seed"], **d["overrides"])
    greedy = generate(model, d["src"], max_len=d["max_len"])
    return model, greedy, beam_search(model, d["src"], width=d["width"], max_len=d["max_len"], alpha=d["alpha"])


def decoder_start(model, src_ids, unknown) -> tuple:
    """(cache, next-token scores) of the decoder that has read its start token (engine/incremental.py)."""
    return incremental.begin(model, model.run_ids(src_ids, [model.start_id], unknown))


def decoders_of(model, live, decoders) -> dict:
    """Each live beam's decoder, by node id: beams kept from the last step read their token into their parent's
    cache (the caches follow the beams kept); those already read (the root) are as they are."""
    return {n.id: decoders[n.id] if n.id in decoders else incremental.read(model, decoders[n.parent][0], n.token_id)
            for n in live}


def _proposals(model, src_ids, unknown, nodes, parent, scores, places) -> list:
    """(parent, token id, log P(token | parent's prefix)) for the parent's `places` most likely next tokens."""
    prefix = [n.token_id for n in _path(nodes, parent.id)]
    logits, _ = _checked(scores, model.run_ids(src_ids, prefix, unknown))  # (V,); the pass names a bad step
    logprobs = log_softmax(logits)  # (V,)
    best = np.argsort(-logprobs, kind="stable")[:places]  # (places,) ties go to the lower id
    return [(parent, int(i), float(logprobs[i])) for i in best]


def _child(node_id, parent, token_id, logprob, model, alpha, length_norm) -> BeamNode:
    token, step, cum = model.vocab.tokens[token_id], parent.step + 1, parent.cum_logprob + logprob
    return BeamNode(node_id, parent.id, step, token_id, token, logprob, cum,
                    sequence_score(cum, step, alpha, length_norm), token == model.vocab.end, False)


def _path(nodes, node_id) -> list:
    path = [nodes[node_id]]
    while path[-1].parent is not None:
        path.append(nodes[path[-1].parent])
    return path[::-1]


def _hypothesis(nodes, last: BeamNode, end: str) -> Hypothesis:
    generated = _path(nodes, last.id)[1:]
    return Hypothesis(last.id, tuple(n.token_id for n in generated), tuple(n.token for n in generated),
                      last.cum_logprob, last.score, last.finished, end)


def length_penalty(length: int, alpha: float, length_norm: str = "plain") -> float:
    """|y|^alpha ("plain") or ((5 + |y|) / 6)^alpha ("gnmt"); the root (length 0) is not divided."""
    if length_norm == "gnmt":
        return ((5 + length) / 6) ** alpha
    return max(length, 1) ** alpha


def sequence_score(logprob: float, length: int, alpha: float, length_norm: str = "plain") -> float:
    """The length-normalised log probability that ranks finished sentences (SCORE_TEX)."""
    return logprob / length_penalty(length, alpha, length_norm)


def _encode_src(model, src: str):
    src_ids, _, src_unknown = model.vocab.encode(src, side="src")
    return src_ids, [("src", w) for w in src_unknown]


def _checked(scores, trace) -> tuple:
    """The next-token logits (masked: <unk> is -inf) and probabilities; refuses numbers no token can be chosen from,
    naming the first step of the forward pass `trace` (run to its end only then) that holds one."""
    logits, probs = scores.masked_logits, scores.probs  # (V,), (V,)
    possible = np.isfinite(vocab_mask(len(logits), trace.model.never_next))  # (V,)
    if not (np.all(np.isfinite(logits[possible])) and np.all(np.isfinite(probs))):
        first = trace.nonfinite[0] if trace.nonfinite else "logits"
        raise ConfigError(f"The model's next-token probabilities are not finite numbers (the first inf or NaN "
                          f"appears at {first}), so no token can be chosen.", "gen_nonfinite", step=first)
    return read_only(logits), read_only(probs)


def _text(tokens, end: str) -> str:
    """The tokens joined by spaces, the end token left out."""
    return " ".join(t for t in tokens if t != end)


def _check_strategy(model, strategy, max_len, temperature, k, p):
    if strategy not in STRATEGIES:
        hint = " (beam search has its own function, beam_search)" if strategy == "beam" else ""
        raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}; got {strategy!r}{hint}")
    _check_max_len(model, max_len)
    if strategy == "greedy" and temperature is not None:
        raise ValueError("greedy always takes the most likely token, so temperature does not apply; "
                         "choose the temperature, top_k or top_p strategy to sample")
    if temperature is not None and not _number(temperature, low=0.0, low_open=True):
        raise ValueError(f"temperature must be a number greater than 0, got {temperature!r}")
    _check_only_for(strategy, "top_k", "k", k)
    _check_only_for(strategy, "top_p", "p", p)
    vocab_size = len(model.vocab)
    if strategy == "top_k" and not (whole(k) and 1 <= k <= vocab_size):
        raise ValueError(f"k must be a whole number from 1 to the vocabulary size ({vocab_size}), got {k!r}")
    if strategy == "top_p" and not (_number(p, low=0.0, low_open=True) and p <= 1):
        raise ValueError(f"p must be a number greater than 0 and at most 1, got {p!r}")


def _check_only_for(strategy, owner, name, value):
    if value is not None and strategy != owner:
        raise ValueError(f"{name} is used only by the {owner} strategy, not by {strategy}")


def _check_beam(model, width, max_len, alpha, length_norm):
    if not (whole(width) and 1 <= width <= MAX_WIDTH):
        raise ValueError(f"the beam width must be a whole number from 1 to {MAX_WIDTH}, got {width!r}")
    _check_max_len(model, max_len)
    if not _number(alpha, low=0.0):
        raise ValueError(f"alpha (the length normalisation exponent) must be a number >= 0, got {alpha!r}")
    if length_norm not in LENGTH_NORMS:
        raise ValueError(f"length_norm must be one of {', '.join(LENGTH_NORMS)}; got {length_norm!r}")


def _check_max_len(model, max_len):
    limit = model.config.max_len
    if not (whole(max_len) and 1 <= max_len <= limit):
        raise ValueError(f"max_len (the most tokens to generate) must be a whole number from 1 to the model's "
                         f"max_len ({limit}), got {max_len!r}")


def _number(value, low: float, low_open: bool = False) -> bool:
    return finite_number(value) and (value > low if low_open else value >= low)
