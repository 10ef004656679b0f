from ui.lessons import blocks
from ui.views import frame


@frame.page
def page(ctx):
    frame.intro(ctx, "encoder_stack")
    blocks.stack_output(ctx, "enc")


page()
