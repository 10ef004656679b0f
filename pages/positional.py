from ui import derivation_views, views


@views.page
def page():
    views.intro("positional")
    views.flow(["src.embed", "src.pos", "src.input"], key="positional", focus="src.pos")
    derivation_views.pe_rotation()


page()
