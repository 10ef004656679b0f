from ui import context, generation_views, views


def decode():
    chosen = generation_views.controls()
    result = generation_views.result()
    if result is not None and chosen["strategy"] == "beam":
        generation_views.beam(result)
    elif result is not None:
        generation_views.player(result)


ctx = context.get()
views.intro("generate")
SECTIONS = {"gen.tab.run": decode, "gen.tab.compare": generation_views.disagreement}  # tab label: what it draws
labels = list(SECTIONS)
for open_tab in views.lazy_tabs([ctx.t(label) for label in labels], "gen.tab"):
    SECTIONS[labels[open_tab]]()
