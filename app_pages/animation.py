from ui.core import session
from ui.lessons import animation_views
from ui.views import frame

frame.intro(session.get(), "animation")
frame.linked(animation_views.player)
