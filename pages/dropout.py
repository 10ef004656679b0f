from ui import blocks, views


@views.page
def page():
    views.intro("dropout")
    blocks.dropout()


page()
