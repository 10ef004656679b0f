from ui.vision import vit_frame


@vit_frame.page
def page():
    vit_frame.intro("vit_train")


page()
