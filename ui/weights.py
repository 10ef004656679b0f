"""Trained or uploaded weights, kept on the server under a short id that the URL carries (pure).

A link such as `?weights=3f2a9c0d81b7` opens the same weights in another browser for as long as this server
holds them; the store forgets the oldest when it is full, and a link to forgotten weights gets a note.
"""
from __future__ import annotations

import hashlib
import re
import threading
from collections import OrderedDict

ID = re.compile(r"[0-9a-f]{12}")


def weights_id(model) -> str:
    """The same weights always get the same id: a hash of the names, shapes and numbers."""
    digest = hashlib.sha256(f"{model.name}|{model.seed}|{model.config.as_dict()}".encode())
    for name, value in model.params.items():
        digest.update(name.encode())
        digest.update(str(value.shape).encode())
        digest.update(value.tobytes())
    return digest.hexdigest()[:12]


class WeightsStore:
    """A bounded, thread-safe map from id to Model, shared by every session of the server."""

    def __init__(self, capacity: int = 16):
        self.capacity = capacity
        self._models: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def put(self, model) -> str:
        key = weights_id(model)
        with self._lock:
            self._models[key] = model
            self._models.move_to_end(key)
            while len(self._models) > self.capacity:
                self._models.popitem(last=False)
        return key

    def get(self, key: str):
        with self._lock:
            model = self._models.get(key)
            if model is not None:
                self._models.move_to_end(key)
            return model
