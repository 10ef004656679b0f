from ui import blocks, views


@views.page
def page():
    views.intro("dec_ffn")
    blocks.ffn("dec", views.layer_picker("layer.dec"), key="dec_ffn")


page()
