from ui import blocks, views


@views.page
def page():
    views.intro("encoder_stack")
    blocks.stack_output("enc")


page()
