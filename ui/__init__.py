"""The rendering layer shared by the pages: pure helpers (format, figures, labels, state, i18n) and the
few Streamlit-facing functions (context, views) that every page calls."""
