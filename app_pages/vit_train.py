from ui.core import session
from ui.views import frame
from ui.vision import vit_evaluation, vit_frame, vit_training


def page(ctx):
    """Not a step page's fragment: Stop must end a run in progress, and a fragment's own button does not (its
    rerun waits for the run to finish), so the page's widgets rerun the whole app, as the text model's training."""
    vit_training.keep_interrupted_run()  # a run that was stopped, or left for another page, before it finished
    vit_frame.intro(ctx, "vit_train")
    vit_training.shipped_facts(ctx)
    if not ctx.reading:  # a following student's page: the teacher trains
        vit_training.trainer(ctx)
    vit_evaluation.evaluation(ctx)


frame.linked(session.use_vision(True), page)
