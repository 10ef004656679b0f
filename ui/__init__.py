"""The app's rendering layer, one package per part, each importing only the packages before it here: `stores` (rooms
and weights every process shares), `core` (the state, the session and its cached runs, the sidebar, the words,
numbers and charts every page uses), `classroom` (following a teacher, presenter mode, the copy-link button),
`views` (a step page's frame, steps, drill-down, editors and pickers) and `lessons` (each page family's lessons)."""
