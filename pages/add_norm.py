from ui import blocks, derivation_views, views


@views.page
def page():
    views.intro("add_norm")
    blocks.add_norm("enc", views.layer_picker("layer.enc"), key="add_norm")
    derivation_views.layer_norm()


page()
