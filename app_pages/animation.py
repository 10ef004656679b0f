from ui.core import session
from ui.lessons import animation_views
from ui.views import frame

ctx = session.get()
frame.intro(ctx, "animation")
frame.linked(ctx, animation_views.player)
