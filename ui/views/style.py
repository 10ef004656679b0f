"""The page's style sheet: one st.components.v2 element with a fixed style sheet alone (no markup, no script, no
data), not isolated so that it reaches the page's own elements, drawn in the sidebar on every run (app.py), where it
adds nothing to a page's main area.

A formula or matrix wider than its column scrolls sideways (KaTeX's `.katex-display`), which a phone's overlay
scrollbar does not show until touched: its cut edge fades out, the right one until it is scrolled to the end, the
left one once it is scrolled. The fade follows the scroll (a scroll-driven animation), and a formula that fits has no
scroll timeline, so no fade. KaTeX ends a matrix or a sub/superscript with a 2 px spacer cell (`.vlist-s`, for
Safari) that its negative margin does not take out of the overflow: every such formula scrolled by 2 px, and would
fade; 2 px of padding at the display's right hold the spacer."""
import streamlit as st

KEY = "page.style"
CSS = """
@keyframes sideways-cue {
  0% { mask-image: linear-gradient(to left, transparent, #000 3rem); }
  1%, 99% { mask-image: linear-gradient(to right, transparent, #000 3rem, #000 calc(100% - 3rem), transparent); }
  100% { mask-image: linear-gradient(to right, transparent, #000 3rem); }
}
[data-testid="stMain"] .katex-display { animation: sideways-cue linear both; animation-timeline: scroll(self inline);
  padding-right: 2px; }
.st-key-page-style { display: none; }
"""
_sheet = st.components.v2.component("page_style", css=CSS, isolate_styles=False)


def sheet() -> None:
    """The style sheet, for this run's page."""
    _sheet(key=KEY)
