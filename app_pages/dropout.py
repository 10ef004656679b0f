from ui.lessons import blocks
from ui.views import frame


@frame.page
def page(ctx):
    frame.intro(ctx, "dropout")
    blocks.dropout(ctx)


page()
