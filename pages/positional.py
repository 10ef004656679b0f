from ui import context, views

ctx = context.get()
views.intro("positional")
views.step("src.pos")
views.step("src.input")
if ctx.config.pos_encoding == "learned":
    views.edit_param("pos.learned", rows=list(range(len(ctx.trace.src_tokens))))
