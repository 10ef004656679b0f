from ui import context, training_views, views


def loss_and_gradients():
    training_views.backward_section(training_views.loss_section())


ctx = context.get()
views.intro("train")
training_views.keep_interrupted_run()  # a run that was stopped, or left for another tab, before it finished
SECTIONS = {"train.tab.loss": loss_and_gradients, "train.corpus_title": training_views.trainer,
            "train.files": training_views.save_load}  # tab label: what the tab draws
labels = list(SECTIONS)
for open_tab in views.lazy_tabs([ctx.t(label) for label in labels], "train.tab"):
    SECTIONS[labels[open_tab]]()
