"""The ViT training page in Chromium at 1280 × 720: English and Chinese open without exceptions on the shipped model's
accuracy, and a misclassified image's button opens it (its number in the link); Train then Stop keeps the steps
done (the page is not a fragment, whose own Stop button would wait for the run to end), and the weights' link opens
them on another ViT page."""
import re

import pytest
from playwright.sync_api import expect

from test_browser import no_exception, server, settle, url  # noqa: F401 (server: a fixture)
from ui.core.i18n import translator


def open_page(new_page, base, lang="en", **query):
    page = new_page(lang)
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(url(base, "vit_train", **query))
    settle(page)
    no_exception(page)
    return page


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_opens_in_both_languages_and_a_miss_opens_its_image(server, new_page, lang):
    t = translator(lang)
    page = open_page(new_page, server, lang)
    expect(page.get_by_text(t("vit_train.accuracy_value", percent="96.39", right=347, n=360))).to_be_visible()
    page.get_by_role("button", name=t("vit_train.miss", n=22, true=9, predicted=1), exact=True).click()
    settle(page)
    no_exception(page)
    assert "vimg=22" in page.url
    expect(page.get_by_text(t("vit.image_is", n=22, digit=9))).to_be_visible()


def test_training_can_be_stopped_and_its_weights_open_on_another_page(server, new_page):
    t = translator("en")
    page = open_page(new_page, server)
    steps = page.get_by_label(t("vit_train.steps"), exact=True)
    steps.fill("5000")
    steps.press("Enter")
    settle(page)
    page.get_by_role("button", name=t("train.start"), exact=True).click()
    expect(page.get_by_text(re.compile(r"Step \d+ of 5000: loss"))).to_be_visible(timeout=60_000)
    page.get_by_role("button", name=t("train.stop"), exact=True).click()
    done = page.get_by_text(re.compile(r"^Stopped after \d+ steps; last loss"))
    expect(done).to_be_visible(timeout=60_000)
    settle(page)
    no_exception(page)
    assert 0 < int(re.search(r"after (\d+) steps", done.inner_text()).group(1)) < 5000
    weights = re.search(r"vw=([0-9a-f]{12})", page.url).group(1)
    other = new_page()
    other.goto(url(server, "vit_head", vw=weights))
    settle(other)
    no_exception(other)
    expect(other.get_by_text(t("vit.weights.trained"), exact=False).first).to_be_visible()
    assert f"vw={weights}" in other.url
