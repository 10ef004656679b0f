"""`make perf`'s regression guard (pure): the ratios the last run recorded in docs/PERFORMANCE.md's "Per page"
section, against a new run's; a case whose ratio is more than LIMIT worse than its record is a regression.

A ratio is a case's figure over the trivial page's in the same run, so higher is worse: the server's CPU per rerun
(p50) and the browser's edit-to-update (median). A case is (measure, page as labelled, change as labelled), e.g.
("server", "attention (paper preset)", "weight edit (number input)"). Ratios are compared as the section writes
them, to one decimal, so that the old → new table reads the figures a reader finds in the file.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

LIMIT = 0.20  # more than 20 % worse than the record is a regression (exactly 20 % is not)
ROUNDING = 1e-9  # a ratio of two decimals is not exact in binary: 2.6 × 1.2 is 3.1199999999999997
SECTION = re.compile(r"^## Per page\n.*?(?=^## |\Z)", re.M | re.S)
PAPER_LINE = re.compile(r"^With the paper preset \([^)]*\): (?P<items>.*)\.$", re.M)
PAPER_ITEM = re.compile(r"(?P<page>\w+) / (?P<change>[^,]+?) (?P<ratio>[\d.]+)× \([\d.]+ ms\)")
PAPER_LABEL = "{page} (paper preset)"  # bench/pages_bench.py's Case.label with the paper preset
TABLES = {"server": ("### Server CPU per rerun", "rerun", "× trivial (p50)"),  # heading, change's and ratio's column
          "browser": ("### Browser edit-to-update", "edit", "× trivial")}


def recorded_version(document: str) -> str | None:
    """The commit the recorded "Per page" figures were measured on."""
    section = SECTION.search(document)
    found = section and re.search(r"The app was `(\w+)`", section.group(0))
    return found.group(1) if found else None


def ratio_of(cell: str) -> float | None:
    """A table's ratio ("2.1×", "**2.6×**"), or None for anything else (a failed case's message, the reference's
    1)."""
    found = re.fullmatch(r"\**([\d.]+)×\**", cell.strip())
    return float(found.group(1)) if found else None


def _subsection(section: str, heading: str) -> str:
    found = re.search(rf"^{re.escape(heading)}\n.*?(?=^### |\Z)", section, re.M | re.S)
    return found.group(0) if found else ""


def _table_rows(text: str) -> list[dict[str, str]]:
    """The first Markdown table of the text as dicts keyed by its header's cells."""
    lines = [line for line in text.splitlines() if line.startswith("|")]
    if len(lines) < 2:
        return []
    cells = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]
    return [dict(zip(cells[0], row)) for row in cells[2:]]


def recorded_ratios(document: str) -> dict[tuple[str, str, str], float]:
    """The ratios of the "Per page" section of a PERFORMANCE.md text, per case: each table's cases (the trivial
    page's own rows and failed cases have none), and the server's with the paper preset from their line."""
    section = SECTION.search(document)
    if section is None:
        return {}
    ratios = {}
    for measure, (heading, change, column) in TABLES.items():
        part = _subsection(section.group(0), heading)
        for row in _table_rows(part):
            ratio = ratio_of(row.get(column, ""))
            if ratio is not None:
                ratios[(measure, row["page"], row[change].removesuffix(" †"))] = ratio
        for line in PAPER_LINE.finditer(part):
            for item in PAPER_ITEM.finditer(line["items"]):
                ratios[(measure, PAPER_LABEL.format(page=item["page"]), item["change"])] = float(item["ratio"])
    return ratios


@dataclass(frozen=True)
class Change:
    """A case's recorded and new ratio (None where one run has no such case)."""
    case: tuple[str, str, str]
    old: float | None
    new: float | None

    @property
    def worse_by(self) -> float | None:
        """How much higher the new ratio is, as a fraction of the old (-0.1: 10 % better)."""
        return None if not self.old or self.new is None else self.new / self.old - 1

    @property
    def regression(self) -> bool:
        return self.worse_by is not None and self.new > self.old * (1 + LIMIT) + ROUNDING


def compare(recorded: dict, measured: dict) -> list[Change]:
    """Every case of either run: the new run's in its order, then those only recorded."""
    cases = list(measured) + [case for case in recorded if case not in measured]
    return [Change(case, recorded.get(case), measured.get(case)) for case in cases]


def regressions(changes: list[Change]) -> list[Change]:
    return [change for change in changes if change.regression]


def report(changes: list[Change]) -> str:
    """The old → new table the guard prints (the cases this run measured), then its verdict."""
    def ratio(value):
        return "-" if value is None else f"{value:.1f}×"

    lines = [f"{'measure':8s} {'case':60s} {'recorded':>9s} → {'new':>6s}  change"]
    for change in changes:
        if change.new is None:
            continue
        measure, page, what = change.case
        worse = "" if change.worse_by is None else f"{change.worse_by:+.0%}"
        flag = f"  more than {LIMIT * 100:.0f} % worse" if change.regression else ""
        lines.append(f"{measure:8s} {page + ' / ' + what:60s} {ratio(change.old):>9s} → {ratio(change.new):>6s}  "
                     f"{worse:>6s}{flag}")
    not_run = sum(change.new is None for change in changes)
    lines.append(verdict(changes) + (f" ({not_run} recorded cases not measured this run)" if not_run else ""))
    return "\n".join(lines)


def verdict(changes: list[Change]) -> str:
    """How many of the cases compared are regressions, and which."""
    found = regressions(changes)
    compared = sum(change.worse_by is not None for change in changes)
    return (f"{len(found)} of {compared} cases compared more than {LIMIT * 100:.0f} % worse than recorded"
            + (": " + ", ".join(f"{c.case[1]} / {c.case[2]} ({c.case[0]}, {c.old:.1f}× → {c.new:.1f}×)"
                                for c in found) if found else ""))
