from ui import blocks, views


@views.page
def page():
    views.intro("dec_add_norm")
    blocks.add_norm("dec", views.layer_picker("layer.dec"), key="dec_add_norm")


page()
