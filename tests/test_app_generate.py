"""The generation page through AppTest: what it shows is the engine's generation for the same settings, the
settings live in the URL (so a shared link reproduces a sampled sentence), the player steps, beam search shows
its best sentence, the greedy-vs-beam example, and bad settings or numbers give a message, not a traceback."""
import numpy as np
import pytest

import engine
from engine.generate import DISAGREEMENT, beam_search, generate
from conftest import page_title
from test_app_train import english_words
from test_app import assert_clean, goto, notes, open_page, paragraphs, query
from ui.core.format import DIGITS, decimals, fmt
from ui.core.i18n import EN, ZH, translator
from ui.core.labels import top_heading

T = translator("en")
SMALL = {"preset": "paper", "cfg": "d_model:16,n_heads:2,d_ff:32,n_layers:1", "src": "the cat sat on the mat"}
CURRENT = "model:current"  # generate with the pages' model (SMALL), not the shipped trained one


def small_model(seed=0):
    return engine.preset("paper", seed=seed, d_model=16, n_heads=2, d_ff=32, n_layers=1)


def markdown_line(at, start):
    """The paragraph of the page's markdown that starts with `start`."""
    return next(line for line in paragraphs(at) if line.startswith(start))


def sentence_line(at, lang="en"):
    return markdown_line(at, f"**{(ZH if lang == 'zh' else EN)['gen.sentence']}**")


def chosen_line(at):
    return markdown_line(at, "**Chosen next token:**")


def expected_sentence(tokens):
    return f"**{EN['gen.sentence']}** `SOS` " + " ".join(f"`{t}`" for t in tokens)


def expected_chosen(step):
    return T("gen.chosen", token=step.token, p=fmt(step.prob, DIGITS), q=fmt(step.sampled_prob, DIGITS))


def test_greedy_is_the_engines_and_the_player_steps():
    at = open_page("generate", gen=CURRENT, **SMALL)
    assert_clean(at)
    expected = generate(small_model(), SMALL["src"], max_len=10)
    assert sentence_line(at) == expected_sentence(expected.tokens)
    ending = T("gen.finished" if expected.finished else "gen.stopped", n=len(expected.steps), end=expected.end)
    assert f":gray[:small[{ending}]]" in paragraphs(at)  # under the sentence, in the same element
    assert chosen_line(at) == expected_chosen(expected.steps[0])
    at.button(key="gen.next").click().run()
    at.button(key="gen.next").click().run()
    assert at.session_state["gen.step"] == 3
    assert chosen_line(at) == expected_chosen(expected.steps[2])
    at.button(key="gen.prev").click().run()
    assert chosen_line(at) == expected_chosen(expected.steps[1])
    at.slider(key="gen.step").set_value(len(expected.steps)).run()
    assert chosen_line(at) == expected_chosen(expected.steps[-1])
    at.button(key="gen.next").click().run()
    assert at.session_state["gen.step"] == len(expected.steps), "the player stops at the last step"


def test_each_step_shows_the_probabilities_of_a_fresh_forward_pass():
    """Open a step on every page: the output page's last row is the distribution the step chose from (which
    incremental decoding computed: the same but for rounding, 1e-12)."""
    at = open_page("generate", gen=CURRENT, **SMALL)
    at.button(key="gen.next").click().run()
    at.button(key="gen.open_step").click().run()
    expected = generate(small_model(), SMALL["src"], max_len=10)
    prefix = expected.steps[1].prefix_tokens
    assert query(at)["tgt"] == " ".join(prefix[1:])
    fresh = small_model().run(SMALL["src"], " ".join(prefix[1:]))
    np.testing.assert_allclose(fresh["probs"][-1], expected.steps[1].probs, rtol=0, atol=1e-12)
    goto(at, "output")
    assert_clean(at)
    assert at.session_state["ctl.tgt"] == " ".join(prefix[1:])


@pytest.mark.parametrize("link, kwargs", [
    ("strategy:temperature,temperature:1.5,seed:7", {"strategy": "temperature", "temperature": 1.5, "seed": 7}),
    ("k:3,seed:11,strategy:top_k", {"strategy": "top_k", "k": 3, "temperature": 1.0, "seed": 11}),
    ("p:0.6,seed:2,strategy:top_p,max_len:6", {"strategy": "top_p", "p": 0.6, "temperature": 1.0, "seed": 2,
                                                 "max_len": 6}),
])
def test_a_shared_link_reproduces_a_sampled_sentence(link, kwargs):
    kwargs = {"max_len": 10, **kwargs}
    expected = generate(small_model(), SMALL["src"], **kwargs)
    first = open_page("generate", gen=f"{CURRENT},{link}", **SMALL)
    assert_clean(first)
    assert sentence_line(first) == expected_sentence(expected.tokens)
    shared = open_page("generate", gen=query(first)["gen"], **SMALL)
    assert sentence_line(shared) == sentence_line(first)
    heading = top_heading(T, "gen.sampled", len(small_model().vocab))
    assert heading.endswith(f"the 10 most likely of {len(small_model().vocab)}")
    assert any(heading in m.value for m in shared.markdown)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_generation_opens_on_the_shipped_trained_model_which_translates(lang):
    at = open_page("generate", lang=lang)
    assert_clean(at)
    assert at.segmented_control(key="gen.model").value == "trained"
    assert f"`SOS` `hola` `mundo` `EOS`" in sentence_line(at, lang)
    at.segmented_control(key="gen.model").set_value("current").run()
    assert_clean(at)
    assert query(at)["gen"] == "model:current"
    expected = generate(engine.preset("hello-world"), "Hello World", max_len=10)
    assert sentence_line(at, lang).endswith(" ".join(f"`{t}`" for t in expected.tokens))
    assert "<unk>" not in expected.tokens


def test_the_trained_model_gives_a_new_word_weights_of_its_own():
    at = open_page("generate", src="Hello Mars")
    assert_clean(at)
    model = engine.with_words(engine.trained(), "Hello Mars")
    assert sentence_line(at) == expected_sentence(generate(model, "Hello Mars", max_len=10).tokens)
    assert [i.value for i in at.info] == [T("msg.new_words", words="` mars `", seed=0, n=len(engine.trained().vocab))]
    known = open_page("generate", src="The cat sat on the mat")  # new to the pages' model, not to the trained one
    assert not known.info and sentence_line(known) == expected_sentence(
        ("el", "gato", "se", "sentó", "en", "la", "alfombra", "EOS"))


def test_changing_the_strategy_goes_into_the_url_and_the_numbers():
    at = open_page("generate", gen=CURRENT, **SMALL)
    at.segmented_control(key="gen.strategy").set_value("temperature").run()
    at.slider(key="gen.temperature").set_value(2.0).run()
    at.number_input(key="gen.seed").set_value(5).run()
    assert_clean(at)
    assert query(at)["gen"] == "model:current,seed:5,strategy:temperature,temperature:2.0"
    expected = generate(small_model(), SMALL["src"], strategy="temperature", temperature=2.0, seed=5, max_len=10)
    assert sentence_line(at) == expected_sentence(expected.tokens)


def test_beam_search_shows_the_engines_best_sentence_and_ranking():
    at = open_page("generate", gen=f"{CURRENT},strategy:beam,width:4,alpha:1.0,max_len:5", **SMALL)
    assert_clean(at)
    expected = beam_search(small_model(), SMALL["src"], width=4, max_len=5, alpha=1.0)
    best = expected.best
    assert any(m.value == T("gen.beam_best", text=best.text or "∅", logp=decimals(best.logprob, 4),
                            score=decimals(best.score, 4)) for m in at.markdown)
    ranking = at.dataframe[0].value
    assert ranking[EN["gen.col.text"]].tolist() == [" ".join(h.tokens) for h in expected.hypotheses]
    assert ranking[EN["gen.score"]].tolist() == [round(h.score, 4) for h in expected.hypotheses]


def test_the_greedy_and_beam_example_disagrees_and_opens():
    at = open_page("generate")
    assert not at.metric, "the example is in the second tab, drawn when it is open"
    at.session_state["gen.tab"] = EN["gen.tab.compare"]
    at.run()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics[EN["gen.s.greedy"]] != metrics[EN["gen.s.beam"]]
    at.button(key="gen.compare_open").click().run()
    assert_clean(at)
    link = query(at)
    assert link["preset"] == DISAGREEMENT["preset"] and link["src"] == DISAGREEMENT["src"]
    assert link["seed"] == str(DISAGREEMENT["seed"]) and "strategy:beam" in link["gen"]
    model = engine.preset(DISAGREEMENT["preset"], seed=DISAGREEMENT["seed"], **DISAGREEMENT["overrides"])
    best = beam_search(model, DISAGREEMENT["src"], width=DISAGREEMENT["width"], max_len=DISAGREEMENT["max_len"],
                       alpha=DISAGREEMENT["alpha"]).best
    assert any(m.value.startswith(f"**Best sentence:** {best.text} ") for m in at.markdown), "shown in the first tab"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_random_models_mixed_languages_are_explained_by_its_one_vocabulary(lang):
    """The untrained example's beam tree shows 力 beside the and soy: the page says the vocabulary is one list of
    English, Spanish and Chinese words, so an untrained model's candidate may be of any of them (issue 30)."""
    T, catalog = translator(lang), ZH if lang == "zh" else EN
    model = engine.preset(DISAGREEMENT["preset"], seed=DISAGREEMENT["seed"], **DISAGREEMENT["overrides"])
    search = beam_search(model, DISAGREEMENT["src"], width=DISAGREEMENT["width"], max_len=DISAGREEMENT["max_len"],
                         alpha=DISAGREEMENT["alpha"])
    assert {"力", "the", "soy"} <= {node.token for node in search.nodes}  # what the note explains
    said = T("gen.shared_vocabulary", vocab=len(model.vocab))
    at = open_page("generate", lang=lang)
    at.session_state["gen.tab"] = catalog["gen.tab.compare"]
    at.run()
    assert any(m.value.endswith(" " + said) for m in at.markdown)
    at.button(key="gen.compare_open").click().run()  # the same model, now the pages': its note says it too
    assert_clean(at)
    assert any(c.value.endswith(" " + said) for c in at.caption)
    assert not any(said in c.value for c in open_page("generate", lang=lang, gen="model:current").caption)


@pytest.mark.parametrize("part", ["strategy:magic", "k:0", "p:1.5", "temperature:nan", "width:9", "max_len:-1",
                                  "seed:1e3", "colour:red", "k"])
def test_a_bad_generation_link_is_noted_and_ignored(part):
    at = open_page("generate", gen=part, **{"lang": "en"})
    assert_clean(at)
    assert "gen" not in query(at)
    first = open_page(gen=part)
    assert any(part[:20] in note for note in notes(first)), notes(first)


def test_non_finite_numbers_give_a_message_not_a_traceback():
    at = open_page("generate", gen=CURRENT,
                   edit="unembed.b:0=1000000.0;embed.tgt:0.0=1000000.0;embed.src:0.0=-1000000.0")
    assert not at.exception
    # a huge but finite logit still lets a token be chosen; the message appears only when nothing can be
    at2 = open_page("generate", gen=CURRENT, cfg="softmax:naive", edit="unembed.b:0=1000000.0")
    assert not at2.exception
    messages = [e.value for e in at2.error]
    assert messages and messages[0].startswith("No token can be chosen"), messages


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_non_finite_probabilities_are_worded_in_the_pages_language(lang):
    """The naive softmax of a huge logit is inf / inf = NaN: the engine names the step, the catalog words it (the
    engine's English sentence reached Chinese screens)."""
    at = open_page("generate", gen=CURRENT, cfg="softmax:naive", edit="unembed.b:0=1000000.0", lang=lang)
    t = translator(lang)
    model = engine.preset("hello-world", softmax="naive").with_cells({"unembed.b": [((0,), 1e6)]})
    with pytest.raises(ValueError) as refused:
        generate(engine.with_words(model, at.session_state["state"].src), at.session_state["state"].src)
    assert refused.value.code == "gen_nonfinite"
    assert [e.value for e in at.error] == [t("gen.failed", error=t("msg.gen_nonfinite", **refused.value.values))]
    assert not english_words(at.error[0].value) or lang == "en"


def test_the_page_in_chinese():
    at = open_page("generate", lang="zh", gen=f"{CURRENT},strategy:beam", **SMALL)
    assert_clean(at)
    assert page_title(at) == ZH["page.generate"]
    assert at.segmented_control(key="gen.strategy").label == ZH["gen.strategy"]
    assert any(m.value.startswith("**最佳句子**：") for m in at.markdown)
