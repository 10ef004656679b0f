from ui import blocks, views


@views.page
def page():
    views.intro("decoder_stack")
    blocks.stack_output("dec")


page()
