"""A typed weight's slider (ui/views/editors.py): its ends and step, so that every number it sends is one the limits
take (limits.check_weight). Pure Python, no Streamlit."""
from __future__ import annotations

import math
from typing import NamedTuple

from ui.core.state.limits import MAX_WEIGHT

SLIDER_STEPS = 200  # a weight's slider moves in about this many steps


class SliderRange(NamedTuple):
    low: float
    high: float
    step: float
    value: float  # where the slider starts: the weight, or the nearest number the slider holds
    decimals: int  # the step's decimals: a slid value is rounded to them (0.30000000000000004 is 0.3)


def slider_range(value: float) -> SliderRange:
    """A weight's slider: value ± max(1, 2|value|) in about SLIDER_STEPS steps of 1, 2 or 5 × 10^k, its ends on
    the steps, within ±MAX_WEIGHT, so that every number it sends is one check_weight takes. A weight that is not
    one (NaN or ±inf of a diverged training run) starts at 0 or at the nearest end."""
    value = float(value)
    centre = 0.0 if math.isnan(value) else min(max(value, -MAX_WEIGHT), MAX_WEIGHT)
    half = max(1.0, 2 * abs(centre))
    wanted = 2 * half / SLIDER_STEPS
    exponent = math.floor(math.log10(wanted))
    step = min((m * 10.0 ** exponent for m in (1, 2, 5, 10)), key=lambda s: abs(math.log(s / wanted)))
    decimals = max(0, -math.floor(math.log10(step)))
    step = round(step, decimals)
    low = max(-MAX_WEIGHT, round(math.floor((centre - half) / step) * step, decimals))
    high = min(MAX_WEIGHT, round(math.ceil((centre + half) / step) * step, decimals))
    return SliderRange(low, high, step, centre, decimals)
