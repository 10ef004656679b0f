from ui.core import session
from ui.lessons import batch_views, training_views
from ui.views import frame, pickers


def loss_and_gradients(ctx):
    training_views.backward_section(ctx, training_views.loss_section(ctx))


ctx = session.get()
frame.intro(ctx, "train")
training_views.keep_interrupted_run()  # a run that was stopped, or left for another tab, before it finished
frame.linked(ctx, lambda ctx: pickers.section_tabs(ctx, {
    "train.tab.loss": loss_and_gradients, "train.corpus_title": training_views.trainer,
    "train.files": training_views.save_load, "train.tab.batch": batch_views.padding}, "train.tab", link="section"))
