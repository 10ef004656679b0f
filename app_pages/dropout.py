from ui.lessons import blocks
from ui.views import frame


@frame.page
def page():
    frame.intro("dropout")
    blocks.dropout()


page()
