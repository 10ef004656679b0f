from ui.lessons import blocks
from ui.views import frame


@frame.page
def page():
    frame.intro("decoder_stack")
    blocks.stack_output("dec")


page()
