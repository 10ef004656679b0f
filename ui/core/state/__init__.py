"""A session's state, by job: the state itself (`app`: AppState; `vision`: its Vision Transformer's part), the limits
it keeps (`limits`), its link (`link`: one table of parts, each with its codec from `codecs`; and a page's view), the
models it builds (`models`) and a typed weight's slider (`sliders`). Pure Python, no Streamlit. The names below are
what the pages use, imported from here: `from ui.core.state import AppState, encode`."""
from ui.core.state.app import CACHE_HASH, DEFAULT_SOURCE, DEFAULT_TARGET, AppState
from ui.core.state.limits import (APP_LIMITS, FLOAT_RANGES, MAX_CHARS, MAX_EDITS, MAX_TOKENS, MAX_WEIGHT, LimitError,
                                  check_limits, check_weight, fitted)
from ui.core.state.link import VIEW_KEYS, decode, decode_view, encode, encode_view
from ui.core.state.models import apply_edits, base_model, fitting_edits, model_settings
from ui.core.state.sliders import slider_range

__all__ = ["APP_LIMITS", "CACHE_HASH", "DEFAULT_SOURCE", "DEFAULT_TARGET", "FLOAT_RANGES", "MAX_CHARS", "MAX_EDITS",
           "MAX_TOKENS", "MAX_WEIGHT", "VIEW_KEYS", "AppState", "LimitError", "apply_edits", "base_model",
           "check_limits", "check_weight", "decode", "decode_view", "encode", "encode_view", "fitted", "fitting_edits",
           "model_settings", "slider_range"]
