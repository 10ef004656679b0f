"""Every section of every page opens: each page drawn in sections (ui/core/navigation.SECTIONS) is opened in English,
then each of its sections chosen in turn from its picker, each drawn without an error and drawing a page of its own.
How a section is added: docs/ARCHITECTURE.md, "Adding a lesson section"."""
import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from test_app import assert_clean, open_page  # noqa: E402
from ui.core.i18n import EN  # noqa: E402
from ui.core.navigation import SECTIONS  # noqa: E402


def drawn(at: AppTest, picker: str) -> tuple:
    """What the page's main area shows, but its section picker: each element's kind, key and value."""
    return tuple((type(element).__name__, getattr(element, "key", None), str(getattr(element, "value", "")))
                 for element in at.main if getattr(element, "key", None) != picker)


@pytest.mark.parametrize("page", SECTIONS)
def test_every_section_of_every_page_opens(page):
    at = open_page(page)
    picker = at.segmented_control(key=SECTIONS[page])
    assert picker.label == EN["view.section"]
    pages = {}
    for label in picker.options:
        at.segmented_control(key=SECTIONS[page]).set_value(label).run()
        assert_clean(at)
        pages[label] = drawn(at, SECTIONS[page])
    assert len(set(pages.values())) == len(pages) > 1, list(pages)  # each section draws a page of its own
