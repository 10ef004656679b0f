from ui.lessons import blocks
from ui.views import frame


@frame.page
def page():
    frame.intro("encoder_stack")
    blocks.stack_output("enc")


page()
