from ui.core import session
from ui.lessons import generation_views
from ui.views import frame, pickers


def decode():
    chosen = generation_views.controls()
    result = generation_views.result()
    if result is not None and chosen["strategy"] == "beam":
        generation_views.beam(result)
    elif result is not None:
        generation_views.player(result)


frame.intro("generate", model_notes=False)  # the controls say which words are new to the generating model
frame.linked(lambda: pickers.section_tabs({"gen.tab.run": decode, "gen.tab.compare": generation_views.disagreement},
                                          "gen.tab", link="section"))
frame.neighbour_links(session.get().state, "generate")
