"""Trained or uploaded weights, kept on the server under a short id that the URL carries (pure).

A link such as `?weights=3f2a9c0d81b7` (a Vision Transformer's: `?vw=...`) opens the same weights in another
browser. Each model is saved as `<id>.npz` (a text model by engine.checkpoint, a Vision Transformer by
engine.vit_train; no pickles) in a directory that every process of the machine shares, so a link
works whichever process of a classroom server a student lands on; a few models also stay in memory so a rerun
does not read the disk. The directory is bounded: the least recently used files go when it holds too many
bytes or files, and a link to forgotten weights gets a note. Beside each file, `<id>.json` records where the
weights came from (trained here on which corpus for how many steps, or an uploaded file's name), for the app to say.

With TRANSFORMER_REDIS_URL set (processes on several machines), the weights go to Redis instead, with the same
caps (RedisWeightsStore).

    TRANSFORMER_WEIGHTS_DIR        the directory (default: build/weights in this checkout)
    TRANSFORMER_WEIGHTS_MAX_MB     total size of its files (default 2048)
    TRANSFORMER_WEIGHTS_MAX_FILES  how many files (default 200)
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import re
import tempfile
import threading
import time
from collections import OrderedDict
from pathlib import Path

from engine import checkpoint, vit_train
from engine.corpus import CORPORA
from engine.vit import VisionTransformer

from ui.stores.rooms import REDIS_PREFIX, redis_client

ID = re.compile(r"[0-9a-f]{12}")
DEFAULT_DIR = Path(__file__).resolve().parents[2] / "build" / "weights"
MAX_ORIGINS = 1000  # origins a process remembers of the weights it put (for those its disk could not keep)
STALE_TEMP_SECONDS = 3600  # a temporary file this old was left by a process that died while writing
ORIGIN_FIELDS = {  # where weights came from: trained on this server, uploaded, or the app's shipped trained model
    "trained": {"kind": str, "corpus": str, "steps": int}, "uploaded": {"kind": str, "file": str},
    "shipped": {"kind": str, "corpus": str}, "vit_trained": {"kind": str, "steps": int},
}


def weights_id(model) -> str:
    """The same weights always get the same id: a hash of the settings, names, shapes and numbers."""
    settings = model.settings if isinstance(model, VisionTransformer) else model.config  # a ViT's image sizes too
    digest = hashlib.sha256(f"{model.name}|{model.seed}|{settings.as_dict()}".encode())
    for name, value in model.params.items():
        digest.update(name.encode())
        digest.update(str(value.shape).encode())
        digest.update(value.tobytes())
    return digest.hexdigest()[:12]


class WeightsStore:
    """A map from id to Model on disk, shared by every process that uses `directory`, with a thread-safe LRU
    of `memory` models in front; the disk keeps at most `max_bytes` and `max_files`."""

    def __init__(self, directory, *, max_bytes: int = 2048 * 2**20, max_files: int = 200, memory: int = 4):
        self.directory = None if directory is None else Path(directory)  # None: RedisWeightsStore
        self.max_bytes, self.max_files, self.memory = max_bytes, max_files, memory
        self._models: OrderedDict = OrderedDict()
        self._origins: dict = {}  # id -> origin of the weights this process put, the oldest first
        self._lock = threading.Lock()

    @classmethod
    def from_environment(cls, environ=os.environ) -> "WeightsStore":
        """The directory's store, or Redis's when TRANSFORMER_REDIS_URL is set (ui/stores/rooms.redis_client)."""
        caps = {"max_bytes": int(environ.get("TRANSFORMER_WEIGHTS_MAX_MB", 2048)) * 2**20,
                "max_files": int(environ.get("TRANSFORMER_WEIGHTS_MAX_FILES", 200))}
        client = redis_client(environ)
        if client is not None:
            return RedisWeightsStore(client, **caps)
        return cls(environ.get("TRANSFORMER_WEIGHTS_DIR") or DEFAULT_DIR, **caps)

    def put(self, model, origin: dict | None = None) -> str:
        """Keep the model and return its id; if the disk cannot take it, it stays in this process only. origin:
        where the weights came from (ORIGIN_FIELDS), kept unless the same weights already have one."""
        key = weights_id(model)
        self._remember(key, model)
        if origin is not None:
            with self._lock:
                self._origins.setdefault(key, origin)
                while len(self._origins) > MAX_ORIGINS:
                    self._origins.pop(next(iter(self._origins)))
        try:
            self._save(key, model, origin)
        except OSError:  # a full or read-only disk: the link works on this process only
            pass
        return key

    def origin(self, key: str) -> dict | None:
        """Where the weights of this id came from, or None if that was not recorded (or the record is unreadable)."""
        if not ID.fullmatch(key):
            return None
        origin = self._origins.get(key)
        if origin is None:  # put by another process
            try:
                origin = json.loads(self._saved_origin(key))
            except (OSError, TypeError, ValueError):
                return None
        fields = ORIGIN_FIELDS.get(str(origin.get("kind"))) if isinstance(origin, dict) else None
        if fields is None or set(origin) != set(fields) or any(
                type(origin[name]) is not kind for name, kind in fields.items()):
            return None
        return origin if "corpus" not in origin or origin["corpus"] in CORPORA else None

    def on_disk(self, key: str) -> bool:
        """Whether the weights are in the shared directory or Redis (else only in the memory of the process that got
        them)."""
        return bool(ID.fullmatch(key)) and self._path(key).is_file()

    def get(self, key: str):
        """The model with this id, or None if the id is malformed or the weights are not (or no longer) kept."""
        if not ID.fullmatch(key):
            return None
        with self._lock:
            model = self._models.get(key)
            if model is not None:
                self._models.move_to_end(key)
        if model is not None:
            self._used(key)  # which keeps it from eviction
            return model
        model = self._load(key)
        if model is not None:
            self._remember(key, model)
        return model

    # ---- where the weights are shared: a directory here, Redis in RedisWeightsStore ---------------------------

    def _save(self, key: str, model, origin: dict | None) -> None:
        path = self._path(key)
        if not _touch(path):
            self._write(path, model)
        if origin is not None and not self._origin_path(key).exists():
            self._origin_path(key).write_text(json.dumps(origin), encoding="utf-8")
        self._evict()

    def _saved_origin(self, key: str) -> str:
        return self._origin_path(key).read_text(encoding="utf-8")

    def _used(self, key: str) -> None:
        _touch(self._path(key))

    def _load(self, key: str):
        """The saved model, or None if it is not there, or damaged (then it is removed)."""
        path = self._path(key)
        if not _touch(path):  # a use, which keeps the file from eviction
            return None
        try:
            with open(path, "rb") as file:
                model = load(file)
        except FileNotFoundError:  # evicted by another process since the touch
            return None
        except (OSError, ValueError):
            model = None
        if model is None or weights_id(model) != key:  # truncated, corrupt or not what its name says
            path.unlink(missing_ok=True)
            self._origin_path(key).unlink(missing_ok=True)
            return None
        return model

    def _path(self, key: str) -> Path:
        return self.directory / f"{key}.npz"

    def _origin_path(self, key: str) -> Path:
        return self.directory / f"{key}.json"

    def _remember(self, key, model) -> None:
        with self._lock:
            self._models[key] = model
            self._models.move_to_end(key)
            while len(self._models) > self.memory:
                self._models.popitem(last=False)

    def _write(self, path: Path, model) -> None:
        """Readers see the whole file or none: a temporary file in the same directory, then a rename."""
        self.directory.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=self.directory, prefix=".", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as file:
                save(model, file)
            os.replace(temp, path)
        except BaseException:
            os.unlink(temp)
            raise

    def _evict(self) -> None:
        """Delete the least recently used files until the directory is within its caps (other processes may be
        doing the same: a file already gone is skipped)."""
        files = []
        for entry in os.scandir(self.directory):
            try:
                stat = entry.stat()
            except FileNotFoundError:
                continue
            if entry.name.endswith(".tmp") and stat.st_mtime < time.time() - STALE_TEMP_SECONDS:
                Path(entry.path).unlink(missing_ok=True)
            elif entry.name.endswith(".npz") and ID.fullmatch(entry.name[:-4]):
                files.append((stat.st_mtime_ns, stat.st_size, entry.path))
        files.sort()  # oldest first
        total, count = sum(size for _, size, _ in files), len(files)
        for _, size, path in files:
            if total <= self.max_bytes and count <= self.max_files:
                break
            Path(path).unlink(missing_ok=True)
            Path(path).with_suffix(".json").unlink(missing_ok=True)
            total, count = total - size, count - 1


class RedisWeightsStore(WeightsStore):
    """The same store with the weights in Redis, for the processes of several machines: `<prefix>weights:<id>` holds
    the .npz bytes, `weights-origin:<id>` where they came from; a sorted set keeps each id's last use, a hash its
    size, for the same caps (least recently used first). A Redis that does not answer is a full disk: the weights
    stay in this process."""

    def __init__(self, client, **caps):
        super().__init__(None, **caps)
        self.client = client
        self._used_at, self._sizes = f"{REDIS_PREFIX}weights-used", f"{REDIS_PREFIX}weights-size"

    def on_disk(self, key: str) -> bool:
        return bool(ID.fullmatch(key)) and self._ask(lambda: self.client.zscore(self._used_at, key)) is not None

    def _save(self, key: str, model, origin: dict | None) -> None:
        file = io.BytesIO()
        save(model, file)
        data = file.getvalue()

        def send():
            pipe = self.client.pipeline()
            pipe.set(self._blob(key), data)
            pipe.hset(self._sizes, key, len(data))
            pipe.zadd(self._used_at, {key: time.time()})
            if origin is not None:
                pipe.set(self._blob(key, "weights-origin"), json.dumps(origin), nx=True)
            pipe.execute()
        if self._ask(send, failed=False) is False:
            raise OSError("Redis did not take the weights")
        self._ask(self._evict)

    def _saved_origin(self, key: str) -> str:
        return self._ask(lambda: self.client.get(self._blob(key, "weights-origin")))

    def _used(self, key: str) -> None:
        self._ask(lambda: self.client.zadd(self._used_at, {key: time.time()}, xx=True))

    def _load(self, key: str):
        data = self._ask(lambda: self.client.get(self._blob(key)))
        if data is None:
            return None
        self._used(key)
        try:
            model = load(io.BytesIO(data))
        except (OSError, ValueError):
            model = None
        if model is None or weights_id(model) != key:  # damaged, or not what its name says
            self._ask(lambda: self._forget(key))
            return None
        return model

    def _evict(self) -> None:
        """Forget the least recently used until within the caps (other processes may be doing the same)."""
        while True:
            sizes = {k.decode(): int(v) for k, v in self.client.hgetall(self._sizes).items()}
            if sum(sizes.values()) <= self.max_bytes and len(sizes) <= self.max_files:
                return
            oldest = self.client.zrange(self._used_at, 0, 0)
            self._forget(oldest[0].decode() if oldest else next(iter(sizes)))

    def _forget(self, key: str) -> None:
        pipe = self.client.pipeline()
        pipe.delete(self._blob(key), self._blob(key, "weights-origin"))
        pipe.hdel(self._sizes, key)
        pipe.zrem(self._used_at, key)
        pipe.execute()

    def _blob(self, key: str, kind: str = "weights") -> str:
        return f"{REDIS_PREFIX}{kind}:{key}"

    @staticmethod
    def _ask(call, failed=None):
        """The call's answer, or `failed` if Redis did not answer (the app goes on with what this process holds)."""
        from redis import RedisError

        try:
            return call()
        except RedisError:
            return failed


def save(model, file) -> None:
    """Write a text model's checkpoint or a Vision Transformer's weights file to a binary file."""
    if isinstance(model, VisionTransformer):
        vit_train.save(model, file)
    else:
        checkpoint.save(model, file)


def load(file):
    """The model a file `save` wrote: a text model, else a Vision Transformer (each format refuses the other's
    file with a ConfigError, a ValueError); a file of neither is refused with the Vision Transformer's."""
    try:
        return checkpoint.load(file)
    except ValueError:
        file.seek(0)
        return vit_train.load(file)[0]


def _touch(path: Path) -> bool:
    """Mark the file as just used (eviction goes by modification time); False if there is no such file."""
    try:
        os.utime(path)
        return True
    except OSError:  # not there, or not ours to touch
        return False
