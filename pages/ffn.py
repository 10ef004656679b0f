from ui import blocks, views


@views.page
def page():
    views.intro("ffn")
    blocks.ffn("enc", views.layer_picker("layer.enc"), key="ffn")


page()
