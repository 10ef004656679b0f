from ui.lessons import animation_views
from ui.views import frame

frame.intro("animation")
animation_views.player()
