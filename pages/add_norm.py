from ui import blocks, views


@views.page
def page():
    views.intro("add_norm")
    blocks.add_norm("enc", views.layer_picker("layer.enc"), key="add_norm")


page()
