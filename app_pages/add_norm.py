from ui.lessons import blocks, derivation_views
from ui.views import frame, pickers


@frame.page
def page():
    frame.intro("add_norm")
    blocks.add_norm("enc", pickers.layer_picker("layer.enc"), key="add_norm")
    derivation_views.layer_norm()


page()
