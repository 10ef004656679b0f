from ui import derivation_views, positional_views, views


def steps():
    views.flow(["src.embed", "src.pos", "src.input"], key="positional", focus="src.pos")


@views.page
def page():
    views.intro("positional")
    views.section_tabs({"pos.tab.steps": steps, **positional_views.sections()}, "pos.tab", link="section")
    derivation_views.pe_rotation()


page()
