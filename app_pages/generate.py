from ui.core import session
from ui.lessons import generation_views
from ui.views import frame, pickers


def decode(ctx):
    chosen = generation_views.controls(ctx)
    result = generation_views.result(ctx)
    if result is not None and chosen["strategy"] == "beam":
        generation_views.beam(ctx, result)
    elif result is not None:
        generation_views.player(ctx, result)


ctx = session.get()
frame.intro(ctx, "generate", model_notes=False,  # the controls say which words are new to the generating model
            model=generation_views.chosen_model(ctx))
frame.linked(ctx, lambda ctx: pickers.section_tabs(ctx, {"gen.tab.run": decode,
                                                         "gen.tab.compare": generation_views.disagreement},
                                                    "gen.tab", link="section"))
frame.neighbour_links(ctx, "generate")
