"""The models a state names: the preset's, the state's settings of a model (after training), and the typed weights
written in. Pure Python, no Streamlit: ui/core/runs.py caches what these build."""
from __future__ import annotations

import engine


def base_model(preset: str, seed: int, overrides: tuple) -> engine.Model:
    return engine.preset(preset, seed=seed, **dict(overrides))


def model_settings(model: engine.Model) -> dict:
    """The preset, seed and overrides of a state whose base model has this model's shapes (e.g. after training)."""
    base = engine.PRESETS[model.name]
    overrides = {k: v for k, v in model.config.as_dict().items() if getattr(base, k) != v}
    return {"preset": model.name, "seed": model.seed, "overrides": tuple(sorted(overrides.items()))}


def apply_edits(model: engine.Model, edits: tuple) -> tuple[engine.Model, int]:
    """The model with the edited cells written in, and how many edits did not fit its shapes."""
    cells = {}
    for param, index, value in fitting_edits(model.params, edits):
        cells.setdefault(param, []).append((index, value))
    return (model.with_cells(cells) if cells else model), len(edits) - sum(map(len, cells.values()))


def fitting_edits(params, edits: tuple) -> tuple:
    """The edits that name a cell of one of the weights `params` (a model's: name -> array)."""
    def fits(param, index):
        array = params.get(param)
        return array is not None and len(index) == array.ndim and all(0 <= i < n for i, n in zip(index, array.shape))
    return tuple(edit for edit in edits if fits(*edit[:2]))
