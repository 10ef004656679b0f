from ui.core.labels import input_side
from ui.lessons import derivation_views, positional_views
from ui.views import frame, pickers, steps


def input_steps(ctx):
    side = input_side(ctx.config)
    steps.flow(ctx, steps.page_steps(ctx, "positional", side), key="positional")


@frame.page
def page(ctx):
    frame.intro(ctx, "positional")
    pickers.section_tabs(ctx, {"pos.tab.steps": input_steps, **positional_views.sections()}, "pos.tab", link="section")
    derivation_views.pe_rotation(ctx)


page()
