"""Beam search as transformers' generate(num_beams=W) runs it (generation/utils.py `_beam_search`, 5.24), for a
checkpoint whose translations should be the ones its users get from transformers (a Marian model's).

It differs from engine.generate.beam_search, the app's own, in four ways:
- W beams stay live at every step: of the 2W most likely continuations (by cumulative log probability), those among
  the first W that end (</s>, or max_len reached) go to a pool of the W best finished sentences, and the W best that
  do not end are the next step's beams; the app's beam narrows instead as sentences finish.
- The log probabilities are the raw logits' log-softmax with the masked tokens (<pad>: bad_words_ids) set to -inf
  after it, not renormalised (transformers' renormalize_logits is false).
- A finished sentence's score is its log probability over its length (the tokens written, </s> counted) to the
  power length_penalty.
- It stops when the pool is full and the best live beam, at its current length, scores no better than the pool's
  worst (early_stopping=False's heuristic), when every continuation ends, or at max_len.
transformers computes these scores in float32, the engine in float64: only a near-tie could choose otherwise.

With force_end (a Marian checkpoint's forced_eos_token_id: logits_process.py, ForcedEOSTokenLogitsProcessor) the
max_len-th token of every beam is </s>, and its log probability counts as 0: the processor sets every other score to
-inf and </s>'s to 0. Each live beam keeps its decoder's cache (engine/incremental.py), as transformers reorders its
cache by the beams kept.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from .generate import (BeamNode, BeamSearch, _check_beam, _encode_src, _hypothesis, decoder_start,
                       decoders_of)
from .loss import log_softmax


def beam_search(model, src: str, width: int = 4, max_len: int = 10, length_penalty: float = 1.0,
                force_end: bool = False) -> BeamSearch:
    """The beam tree (each step's 2W continuations; kept: a next beam or a finished sentence of the pool) and the
    pool's sentences, best first."""
    _check_beam(model, width, max_len, length_penalty, "plain")
    src_ids, unknown = _encode_src(model, src)
    start, end = model.start_id, model.vocab.end
    nodes = [BeamNode(0, None, 0, start, model.vocab.tokens[start], 0.0, 0.0, 0.0, False, True)]
    live, pool, improving, decoders = [nodes[0]], [], True, {0: decoder_start(model, src_ids, unknown)}
    while live:
        decoders = decoders_of(model, live, decoders)
        forced = force_end and live[0].step == max_len - 1
        candidates = _continuations(model, live, decoders, 2 * width, model.vocab.id(end) if forced else None)
        new = [BeamNode(len(nodes) + rank, parent.id, parent.step + 1, token_id, model.vocab.tokens[token_id], logprob,
                        cum, cum / (parent.step + 1) ** length_penalty, model.vocab.tokens[token_id] == end, False)
               for rank, (cum, parent, token_id, logprob) in enumerate(candidates)]
        ends = {n.id for n in new if n.finished or n.step >= max_len}  # </s>, or max_len reached
        pool = sorted(pool + [n for n in new[:width] if n.id in ends], key=lambda n: -n.score)[:width]
        live = [n for n in new if n.id not in ends][:width]
        kept = {n.id for n in pool} | {n.id for n in live}
        nodes += [dataclasses.replace(n, kept=n.id in kept) for n in new]
        live = [nodes[n.id] for n in live]
        if live and len(pool) == width:  # the heuristic: could a live beam still beat the pool's worst?
            improving = live[0].cum_logprob / live[0].step ** length_penalty > pool[-1].score
        if not improving:
            break
    pool = [nodes[n.id] for n in pool]
    settings = {"width": width, "max_len": max_len, "alpha": length_penalty, "length_norm": "plain",
                "force_end": force_end}
    return BeamSearch(src, settings, tuple(nodes), tuple(_hypothesis(nodes, n, end) for n in pool))


def _continuations(model, live, decoders, count, forced=None) -> list:
    """(cumulative log P, parent, token id, log P(token)) of the `count` most likely continuations of the live beams,
    most likely first; only the token `forced` (log P 0) where one is."""
    found = []
    for parent in live:
        if forced is not None:
            found.append((parent.cum_logprob, parent, forced, 0.0))
            continue
        logprobs = log_softmax(decoders[parent.id][1].logits)  # (V,) raw: masked after the log-softmax
        logprobs[list(model.never_next)] = -np.inf
        best = np.argsort(-logprobs, kind="stable")[:count]
        found += [(parent.cum_logprob + float(logprobs[i]), parent, int(i), float(logprobs[i])) for i in best]
    return sorted(found, key=lambda c: -c[0])[:count]
