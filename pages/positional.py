from ui import context, views

ctx = context.get()
views.intro("positional")
views.step("src.pos")
views.step("src.input")
