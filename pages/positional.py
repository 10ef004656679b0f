from ui.lessons import derivation_views, positional_views
from ui.views import frame, pickers, steps


def input_steps():
    steps.flow(steps.page_steps("positional", "src"), key="positional", focus="src.pos")


@frame.page
def page():
    frame.intro("positional")
    pickers.section_tabs({"pos.tab.steps": input_steps, **positional_views.sections()}, "pos.tab", link="section")
    derivation_views.pe_rotation()


page()
