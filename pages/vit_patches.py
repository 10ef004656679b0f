from ui.views import steps
from ui.vision import vit_frame


@vit_frame.page
def page():
    vit_frame.intro("vit_patches")
    steps.flow(["img.patches", "img.embed", "img.cls", "img.pos", "img.input"], key="vit_patches")


page()
