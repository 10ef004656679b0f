from ui.lessons import exercise_views
from ui.views import frame

frame.linked(exercise_views.body)
