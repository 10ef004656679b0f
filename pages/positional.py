from ui import context, views

ctx = context.get()
views.intro("positional")
views.flow(["src.embed", "src.pos", "src.input"], key="positional", focus="src.pos")
