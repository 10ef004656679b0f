from ui import views


@views.page
def page():
    views.intro("positional")
    views.flow(["src.embed", "src.pos", "src.input"], key="positional", focus="src.pos")


page()
