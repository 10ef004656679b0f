"""Fixtures shared by test modules: one Chromium for the whole run (a second sync Playwright cannot start while
the first one's event loop is running). Playwright is imported by the browser fixtures only, so the tests that use
no browser run where it is not installed (tests/test_engine_imports.py)."""
import asyncio
import concurrent.futures
import os
from pathlib import Path

import pytest


def in_own_thread(scenario):
    """asyncio.run(scenario()) in a thread of its own: the browser fixture's sync Playwright keeps an event loop
    running in the main thread for the rest of the run."""
    with concurrent.futures.ThreadPoolExecutor(1) as thread:
        return thread.submit(lambda: asyncio.run(scenario())).result()


@pytest.fixture(scope="session")
def chromium():
    from playwright.sync_api import sync_playwright

    from test_browser import CHROMIUM, CHROMIUM_ARGS

    if not Path(CHROMIUM).exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{CHROMIUM} is missing (CI=true: the browser tests must run)")
        pytest.skip(f"{CHROMIUM} is missing")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def new_page(chromium):
    from test_browser import LOCALES, WIDTH

    contexts = []

    def make(lang="en"):
        context = chromium.new_context(viewport={"width": WIDTH, "height": 900}, locale=LOCALES[lang])
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        context.close()
