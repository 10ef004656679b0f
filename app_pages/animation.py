from ui.lessons import animation_views
from ui.views import frame

frame.intro("animation")
frame.linked(animation_views.player)
