from ui import animation_views, views

views.intro("animation")
animation_views.player()
