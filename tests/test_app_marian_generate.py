"""The generation page with a real translator loaded (tests/test_app_marian.py's test checkpoint): it opens on the
translator with the checkpoint's own decoding (generation_config.json: its beams, length penalty, forced </s>, as
transformers' generate() runs it), whether the translator came from the box or from a link without gen=, and writes
what engine/transformers_beam.py and marian's command line write; another strategy, and the toy model, are a click
away and kept in the link against the translator's defaults."""
import json
import subprocess
import sys

import pytest

import engine
from engine import transformers_beam
from engine.generate import beam_search, generate
from test_app import assert_clean, open_link, open_page, query
from test_app_marian import MODEL, load, models_dir, models_root  # noqa: F401 (fixtures)
from ui.core import generation
from ui.core.i18n import EN, ZH, literal, translator
from ui.core.runs import marian_model
from ui.core.state.codecs import GenerationSettings
from ui.lessons import beam_tree

SRC = "Hello world."


def checkpoint() -> dict:
    return marian_model(MODEL)[1]


def page_settings(at) -> dict:
    return {name: at.session_state[f"gen.{name}"] for name in generation.DEFAULTS}


def best_tokens(at) -> list:
    """The page's best beam hypothesis (its table's first row)."""
    return at.main.dataframe[0].value[EN["gen.col.text"]][0].split(" ")


def cli(folder, *options) -> dict:
    """`python -m marian` on the checkpoint's folder, as a user would run it."""
    done = subprocess.run([sys.executable, "-m", "marian", "--model", str(folder), "--src", SRC, *options],
                          capture_output=True, text=True, check=True, timeout=300)
    return json.loads(done.stdout)


def test_the_defaults_are_the_checkpoints_within_the_pages_ranges():
    opus = {"num_beams": 6, "length_penalty": 1.0, "max_length": 512, "force_end": True}  # opus-mt-en-de's
    assert generation.defaults(opus) == {**generation.DEFAULTS, "model": "current", "strategy": "beam",
                                         "width": generation.RANGES["width"][1], "alpha": 1.0,
                                         "max_len": generation.RANGES["max_len"][1]}
    one = generation.defaults({**opus, "num_beams": 1, "length_penalty": 0.6, "max_length": 9})
    assert (one["strategy"], one["width"], one["alpha"], one["max_len"]) == ("greedy", 1, 0.6, 8)
    assert generation.defaults(None) == generation.DEFAULTS


def test_a_link_keeps_a_setting_that_equals_the_toys_default():
    """gen=strategy:greedy chose greedy over a translator's beam search: reading the link must not drop it."""
    assert GenerationSettings().decode("strategy:greedy,model:trained", None) == (
        (("model", "trained"), ("strategy", "greedy")), [])


@pytest.mark.parametrize("opened", ["link", "box"])
def test_the_page_opens_on_the_translator_with_its_beam_search(models_dir, opened):
    """A link with model= and no gen= means the translator's defaults; the box's load leaves gen= out too."""
    at = open_link("generate", model=MODEL, src=SRC) if opened == "link" else load(open_page("generate", src=SRC),
                                                                                    MODEL)
    assert_clean(at)
    assert query(at)["model"] == MODEL and "gen" not in query(at)
    own = checkpoint()
    expected = generation.defaults(own)
    assert page_settings(at) == expected
    assert (expected["strategy"], expected["width"], expected["alpha"]) == ("beam", own["num_beams"], 1.0)
    assert expected["max_len"] == min(own["max_length"] - 1, generation.RANGES["max_len"][1]) == 30
    model = marian_model(MODEL)[0]
    search = transformers_beam.beam_search(model, SRC, width=own["num_beams"], max_len=expected["max_len"],
                                           length_penalty=own["length_penalty"], force_end=own["force_end"])
    assert best_tokens(at) == list(search.best.tokens)
    assert cli(models_dir / MODEL, "--beam", "--max-len", str(expected["max_len"]))["tokens"] == best_tokens(at)
    assert any(EN["gen.m.forced_end"] in c.value for c in at.caption)
    # the sentence tells the decodings apart: the app's own beam search, and transformers' without the forced end
    assert list(beam_search(model, SRC, width=own["num_beams"], max_len=expected["max_len"],
                            alpha=own["length_penalty"]).best.tokens) != best_tokens(at)
    assert list(transformers_beam.beam_search(model, SRC, width=own["num_beams"], max_len=expected["max_len"],
                                              length_penalty=own["length_penalty"]).best.tokens) != best_tokens(at)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_choice_names_the_translator(models_dir, lang):
    at = open_link("generate", model=MODEL, src=SRC, lang=lang)
    t = translator(lang)
    choice = at.button_group(key="gen.model")
    assert choice.value == "current"
    labels = choice.options  # as the page shows them
    assert t("gen.m.translator", name=literal(MODEL)) in labels and t("gen.m.trained") in labels
    catalog = ZH if lang == "zh" else EN
    assert any(catalog["gen.m.checkpoint"].split("{")[0] in c.value for c in at.caption)


def test_greedy_with_the_translator_forces_the_end_as_generate_does(models_dir, tmp_path):
    at = open_link("generate", model=MODEL, src=SRC)
    at.button_group(key="gen.strategy").set_value("greedy").run()
    assert_clean(at)
    assert query(at)["gen"] == "strategy:greedy"
    max_len = generation.defaults(checkpoint())["max_len"]
    greedy = generate(marian_model(MODEL)[0], SRC, max_len=max_len, force_end=True)
    assert greedy.tokens != generate(marian_model(MODEL)[0], SRC, max_len=max_len).tokens  # the end is forced
    start = marian_model(MODEL)[0].vocab.tokens[marian_model(MODEL)[0].start_id]
    assert start == "<pad>"  # Marian's decoder starts from the pad token, which the line shows in SOS's place
    line = f"**{EN['gen.sentence']}** " + " ".join(f"`{token}`" for token in (start, *greedy.tokens))
    assert line in [m.value.split("\n")[0] for m in at.markdown]
    assert cli(models_dir / MODEL, "--max-len", str(max_len))["tokens"] == list(greedy.tokens)
    again = open_link("generate", **query(at))  # the link keeps greedy, though greedy is the toy's default
    assert page_settings(again)["strategy"] == "greedy"


def test_the_toy_model_is_one_click_away(models_dir):
    at = open_link("generate", model=MODEL, src=SRC)
    at.button_group(key="gen.model").set_value("trained").run()
    assert_clean(at)
    assert query(at)["gen"] == "model:trained" and query(at)["model"] == MODEL
    toy = engine.with_words(engine.trained(), SRC)
    expected = generation.run(toy, SRC, (("model", "trained"),), checkpoint())  # the app's beam search
    assert expected.settings["length_norm"] == "plain"
    assert best_tokens(at) == list(expected.best.tokens)
    assert any(c.value.startswith(EN["gen.m.trained_note"].split("{")[0]) for c in at.caption)


def test_the_beam_tree_draws_every_box_of_transformers_search():
    """transformers' search keeps the sentences it finished beside its live beams: a row may hold more than width + 1
    boxes (the shipped trained model ends "hola mundo" early while its beams go on), and the figure takes them in."""
    width = 3
    search = transformers_beam.beam_search(engine.trained(), "Hello World", width=width, max_len=10)
    chart = beam_tree.beam_tree(search, {"logp": "log P", "score": "s", "pruned": "{n}", "best": "{token} {logp}"})
    layout = chart.to_dict()["layout"]
    low, high = layout["xaxis"]["range"]
    columns = [box["x"] for box in layout["annotations"]]
    assert max(columns) > width  # the case the range once cut off
    assert low < min(columns) and max(columns) < high
