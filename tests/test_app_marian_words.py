"""With a real translator loaded (tests/test_app_marian.py's test checkpoint), every text says what runs, in both
languages: the animation's, generation's and training's intros name the model's own start and end tokens (Marian's
decoder starts from <pad> and ends at </s>), the sidebar's preset list shows the translator (a preset chosen unloads
it), the exercises grade what the generation page of their link writes (the translator's beam search, length penalty,
forced </s>), the beam tree's legend says what transformers' search does, and a Chinese screen shows no English."""
import re
from urllib.parse import parse_qsl

import pytest

import engine
from engine import exercises as ex
from test_app import assert_clean, goto, open_link, open_options, query
from test_app_marian import MODEL, load, models_dir, models_root, uses_translator  # noqa: F401 (fixtures)
from test_app_marian_generate import SRC, checkpoint
from test_no_english import english_in_choices
from ui.core import generation
from ui.core.i18n import EN, literal, translator
from ui.core.labels import TOKEN_INTROS
from ui.core.runs import marian_model
from ui.core.sidebar import TRANSLATOR
from ui.lessons.exercise_views import prepared_link

MARIAN_TOKENS = {"start": "`<pad>`", "end": "`</s>`"}  # as a text shows them (code: Markdown would read tags)
TOY_TOKENS = {"start": "SOS", "end": "EOS"}
SPECIAL = re.compile(r"\b(?:SOS|EOS)\b")


def intro(at) -> str:
    return at.main.markdown[0].value


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("page", TOKEN_INTROS)
def test_an_intro_names_the_translators_start_and_end_tokens(models_dir, page, lang):
    at = open_link(page, model=MODEL, src=SRC, lang=lang)
    assert_clean(at)
    model = marian_model(MODEL)[0]
    assert (model.vocab.tokens[model.start_id], model.vocab.end) == ("<pad>", "</s>")  # what the tokens are
    assert translator(lang)(f"intro.{page}", **MARIAN_TOKENS) in intro(at)
    assert not SPECIAL.search(intro(at)), intro(at)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_generation_intro_names_the_tokens_of_the_model_that_generates(models_dir, lang):
    """The toy model one click away starts from SOS and ends at EOS, though the pages' model is the translator."""
    at = open_link("generate", model=MODEL, src=SRC, lang=lang, gen="model:trained")
    assert_clean(at)
    assert translator(lang)("intro.generate", **TOY_TOKENS) in intro(at)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_generation_page_says_the_translator_ends_at_its_own_token(models_dir, lang):
    t = translator(lang)
    at = open_link("generate", model=MODEL, src=SRC, lang=lang)  # the checkpoint's beam search
    own = checkpoint()
    legend = t("gen.beam_legend.transformers", end=MARIAN_TOKENS["end"])
    assert legend in [c.value for c in at.caption]
    assert t("gen.col.finished", end="</s>") in at.main.dataframe[0].value.columns
    at.button_group(key="gen.strategy").set_value("greedy").run()
    written = generation.run(marian_model(MODEL)[0], SRC, (("strategy", "greedy"),), own)
    note = t("gen.finished" if written.finished else "gen.stopped", n=len(written.steps), end=MARIAN_TOKENS["end"])
    assert any(note in m.value for m in at.markdown)
    assert not any(SPECIAL.search(m.value) for m in [*at.main.markdown, *at.caption][1:])  # below the intro


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_apps_own_beam_search_keeps_its_legend(models_dir, lang):
    """The toy model's search is the app's (engine.generate.beam_search): the legend of transformers' is not its."""
    t = translator(lang)
    at = open_link("generate", model=MODEL, src=SRC, lang=lang, gen="model:trained,strategy:beam")
    captions = [c.value for c in at.caption]
    assert t("gen.beam_legend", end=TOY_TOKENS["end"]) in captions
    assert t("gen.beam_legend.transformers", end=TOY_TOKENS["end"]) not in captions


def test_the_legend_of_transformers_search_says_what_its_code_does():
    """The facts the legend states, against transformers' generation/utils.py (the version engine/transformers_beam.py
    follows): 2W continuations, the first W that end go to the pool, scores divided by the generated length to the
    power length_penalty, and early_stopping=False's heuristic at the current length."""
    utils = pytest.importorskip("transformers.generation.utils")
    source = open(utils.__file__, encoding="utf-8").read()
    assert "beams_to_keep = max(2, 1 + n_eos_tokens) * num_beams" in source
    assert "next_token_hits_stopping_criteria & top_num_beam_mask[None, :]" in source
    assert "topk_log_probs / ((cur_len + 1 - decoder_prompt_len) ** length_penalty)" in source
    assert "best_hypothetical_length = cur_len - decoder_prompt_len" in source
    from transformers import GenerationConfig
    assert GenerationConfig._get_default_generation_params()["early_stopping"] is False  # where a checkpoint sets none


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_preset_list_shows_the_translator_and_a_preset_unloads_it(models_dir, lang):
    t = translator(lang)
    at = load(open_link("overview", lang=lang), MODEL)
    assert uses_translator(at)
    box = at.sidebar.selectbox(key="ctl.preset")
    assert box.value == TRANSLATOR and box.options[-1] == t("preset.translator", name=MODEL)
    assert t("preset.paper") in box.options
    box.set_value("paper").run()
    assert_clean(at)
    assert "model" not in query(at) and at.session_state["state"].preset == "paper"
    assert at.session_state["state"].config() == at.session_state["context"].model.config
    box = at.sidebar.selectbox(key="ctl.preset")
    assert box.value == "paper" and t("preset.translator", name=MODEL) not in box.options


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_target_button_claims_neither_the_posts_step_nor_its_three_positions(models_dir, lang):
    """The sidebar's target button called the start token alone "the post's first decoding step" and the default
    target "three decoder positions": a translator starts from <pad> and cuts "Hola Mundo" into its own pieces."""
    t = translator(lang)
    at = open_link("overview", model=MODEL, src=SRC, lang=lang)
    assert uses_translator(at)
    assert at.button(key="ctl.tgt_toggle").label == t("ctl.tgt_sos.translator", start=MARIAN_TOKENS["start"])
    at.button(key="ctl.tgt_toggle").click().run()
    assert_clean(at)
    assert at.session_state["state"].tgt == ""
    assert at.button(key="ctl.tgt_toggle").label == t("ctl.tgt_default.translator", target="Hola Mundo")
    assert list(at.session_state["context"].trace.tgt_tokens) == ["<pad>"]
    at.button(key="ctl.tgt_toggle").click().run()
    tokens = at.session_state["context"].trace.tgt_tokens  # <pad> and the pieces of "Hola Mundo": not the post's 3
    assert tokens[0] == "<pad>" and len(tokens) != 3, tokens


@pytest.mark.parametrize("drop", ["button", "option"])
def test_the_preset_list_follows_a_translator_dropped_otherwise(models_dir, drop):
    """The sidebar's "back to the preset" button, or another seed (sidebar._asked: the translator's weights fit only
    its own settings), drops the translator: its entry leaves the list, which shows the preset again."""
    at = open_link("overview", model=MODEL, src=SRC)
    if drop == "button":
        at.sidebar.button(key="ctl.drop_marian").click().run()
    else:
        open_options(at)
        at.sidebar.number_input(key="ctl.seed").set_value(5.0).run()
        at.run()  # the list drawn after the run that dropped it
    assert_clean(at)
    assert "model" not in query(at)
    box = at.sidebar.selectbox(key="ctl.preset")
    assert box.value == "paper" and box.options == [EN[f"preset.{preset}"] for preset in engine.PRESETS]


def give(at, key: str, answer: str) -> None:
    """An exercise's answer typed or chosen, and its form's Check pressed."""
    next(w for w in [*at.text_input, *at.radio] if w.key == f"ex.answer.{key}").set_value(answer)
    next(b for b in at.button if b.proto.form_id == f"ex.form.{key}").click()
    at.run()
    assert_clean(at)


def page_answer(key: str, link: dict) -> str:
    """The exercise's answer read off the generation page its link opens, as a learner would."""
    shown = open_link("generate", **link)
    assert_clean(shown)
    if key == "decoder_passes":
        written = next(m.value for m in shown.main.markdown if m.value.startswith("**Generated:**"))
        return str(written.split("\n")[0].count("`") // 2 - 1)  # the tokens written after <pad>, one per pass
    best = next(m.value for m in shown.main.markdown if m.value.startswith("**Best sentence:**"))
    greedy = open_link("generate", **{**link, "gen": f"{link['gen']},strategy:greedy"})  # beam: the default
    written = next(m.value for m in greedy.main.markdown if m.value.startswith("**Generated:**"))
    words = [w for w in written.split("\n")[0].split("`")[1::2][1:] if w != "</s>"]
    return "yes" if best.split("**")[2].split("—")[0].split() == words else "no"


@pytest.mark.parametrize("key", ["decoder_passes", "greedy"])
def test_a_generation_exercise_grades_what_the_translators_page_writes(models_dir, key):
    at = open_link("exercises", model=MODEL, src=SRC)
    link = dict(parse_qsl(prepared_link(at.session_state["state"], key).split("?", 1)[1]))
    assert link["model"] == MODEL
    read = page_answer(key, link)
    at.session_state[f"ex.open.{key}"] = True
    at.run()
    give(at, key, read)
    assert translator("en")("ex.right") in [s.value for s in at.success], (key, read)


def test_the_exercises_decode_as_the_checkpoint_does(models_dir):
    """Their explanations show the generation page's decodings: the checkpoint's forced </s> and transformers' beam
    search (engine.generate's, without the checkpoint's settings, write other sentences)."""
    from engine.generate import beam_search, generate

    model, own = marian_model(MODEL)
    greedy = generation.run(model, SRC, (("max_len", ex.GENERATED), ("strategy", "greedy")), own)
    beam = generation.run(model, SRC, (("alpha", 0.0), ("max_len", ex.GENERATED), ("width", ex.BEAM_WIDTH)), own)
    assert generate(model, SRC, max_len=ex.GENERATED).tokens != greedy.tokens  # the forced </s>
    assert {h.tokens for h in beam_search(model, SRC, width=ex.BEAM_WIDTH, max_len=ex.GENERATED,
                                          alpha=0.0).hypotheses} != {h.tokens for h in beam.hypotheses}
    right = {"decoder_passes": ex.decoder_passes(greedy), "greedy": ex.greedy_optimal(greedy, beam)}
    at = open_link("exercises", model=MODEL, src=SRC)
    t = translator("en")
    for key, answer in right.items():
        at.session_state[f"ex.open.{key}"] = True
        at.run()
        give(at, key, str(answer.value))
        assert t("ex.right") in [s.value for s in at.success], key
    said = " ".join(m.value for m in at.markdown)
    assert literal(" ".join(greedy.tokens)) in said and literal(" ".join(right["greedy"].evidence["beam"][0])) in said
    assert right["decoder_passes"].value == len(greedy.steps) and greedy.forced_end
    (_, greedy_lp), (_, beam_lp) = right["greedy"].evidence["greedy"], right["greedy"].evidence["beam"]
    assert greedy_lp == pytest.approx(greedy.logprob - greedy.steps[-1].logprob)  # the forced </s> counts log 1,
    # as in transformers' beam search


def test_no_english_on_a_chinese_screen_with_the_translator(models_dir):
    at = open_link("overview", model=MODEL, src=SRC, lang="zh")
    found = english_in_choices(at, "overview")
    for page in ("animation", "generate", "train", "exercises"):
        found |= english_in_choices(goto(at, page), page)
    assert found == {}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_handout_names_the_translator_in_the_presets_row(models_dir, lang):
    """The handout's settings (ui/handout/download.settings_of's, with a translator loaded): the translator, not the
    paper preset whose settings it runs on."""
    from ui.core.model_card import code, translator_origin
    from ui.handout.document import Settings
    from ui.handout.render import handout_file

    model = marian_model(MODEL)[0]
    t = translator(lang)
    settings = Settings("paper", 0, SRC, "", 4, weights=MODEL, origin=translator_origin(MODEL, model))
    page = handout_file(model.run(SRC, ""), t, settings, "md")
    assert f"| {t('ctl.preset')} | {t('preset.translator', name=code(MODEL))} |" in page
    assert t("preset.paper") not in page
