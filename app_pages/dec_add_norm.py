from ui.lessons import blocks
from ui.views import frame, pickers


@frame.page
def page():
    frame.intro("dec_add_norm")
    blocks.add_norm("dec", pickers.layer_picker("layer.dec"), key="dec_add_norm")


page()
