"""The one rule for writing a number, which every number the app prints follows: matrices, heatmaps, tables, and the
per-cell arithmetic's text and LaTeX (engine/explain.py)."""
from __future__ import annotations

import math

SUPERSCRIPTS = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")  # an exponent as the plain text writes it: 10⁻⁴
READ_BACK = str.maketrans({"−": "-", "×": None, "⁻": "-", **{sup: str(k) for k, sup in enumerate("⁰¹²³⁴⁵⁶⁷⁸⁹")}})
NOISE_ULPS = 8  # a shown number this close to the value differs from it by floating-point noise, not by rounding


def significant(x, digits: int = 6) -> str:
    """`digits` significant digits, as a power of ten below 0.001 and from 100000 on (6.385×10⁻⁴, as the LaTeX
    writes it), minus as '−'. A whole part is written in full (105.21 at 2 digits is 105, not 1.1×10²)."""
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    if x == 0:
        return "0"
    if not _scientific(x):
        text = f"{x:.{digits}g}"
        return (f"{x:.0f}" if "e" in text else text).replace("-", "−")
    mantissa, exponent = _power_of_ten(x, digits)
    return f"{mantissa}×10{str(exponent).translate(SUPERSCRIPTS)}".replace("-", "−")


def rounds(x, digits: int = 6) -> bool:
    """Whether significant(x, digits) shows a rounding of x, not x itself: its digits, read back, differ from x by more
    than floating-point noise (3.99 + 6 is 9.990000000000002 in floats, and "9.99" is its exact sum as shown)."""
    x = float(x)
    if not math.isfinite(x) or x == 0:
        return False
    shown = float(significant(x, digits).replace("×10", "e").translate(READ_BACK))
    return abs(shown - x) > NOISE_ULPS * math.ulp(x)


def num_tex(x, digits: int = 6) -> str:
    """significant() in LaTeX."""
    if math.isfinite(x) and _scientific(float(x)):
        mantissa, exponent = _power_of_ten(float(x), digits)
        return rf"{mantissa} \times 10^{{{exponent}}}"
    text = significant(x, digits).replace("−", "-")
    if text in ("∞", "-∞"):
        return text.replace("∞", r"\infty")
    if text == "NaN":
        return r"\text{NaN}"
    return text


def _scientific(x: float) -> bool:
    """Whether a finite number is written as a power of ten."""
    return x != 0 and not 1e-3 <= abs(x) < 1e5


def _power_of_ten(x: float, digits: int) -> tuple[str, int]:
    """(mantissa with `digits` significant digits, trailing zeros dropped; exponent): 6.385e−4 -> ("6.385", −4)."""
    mantissa, exponent = f"{x:.{digits - 1}e}".split("e")
    return mantissa.rstrip("0").rstrip("."), int(exponent)
