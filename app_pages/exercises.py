from ui.core import session
from ui.lessons import exercise_views
from ui.views import frame

frame.linked(session.get(), exercise_views.body)
