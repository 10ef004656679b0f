"""The weights store (ui/stores/weights.py): a model put by one store is found by another on the same directory (or the
same Redis, against a real redis-server: the `redis_url` fixture), as
another process of a classroom server would find it; the directory stays within its caps (least recently used
first); a corrupt, truncated or misnamed file is a missing one, and removed; a malformed id never touches the
disk; concurrent puts leave whole files."""
import os
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import engine  # noqa: E402
from engine import checkpoint, vit_train  # noqa: E402
from engine.vit import ViTConfig, VisionTransformer  # noqa: E402
from conftest import free_port  # noqa: E402
from ui.stores.rooms import REDIS_PREFIX, redis_client  # noqa: E402
from ui.stores.weights import DEFAULT_DIR, RedisWeightsStore, WeightsStore, weights_id  # noqa: E402


def small_model(seed=0):
    return engine.preset("paper", seed=seed, d_model=16, n_heads=2, d_ff=32, n_layers=1)


def small_vit(seed=0, **sizes):
    return VisionTransformer.initial(ViTConfig(**{"d_model": 8, "n_heads": 2, "n_layers": 1, "d_ff": 16, **sizes}),
                                     seed)


def assert_same_vit(loaded, model):
    """The same Vision Transformer, bit for bit: its sizes, seed, and every parameter's dtype and bytes."""
    assert isinstance(loaded, VisionTransformer) and loaded is not model
    assert loaded.settings == model.settings and loaded.seed == model.seed and list(loaded.params) == list(model.params)
    for name, value in model.params.items():
        assert loaded.params[name].dtype == value.dtype and loaded.params[name].tobytes() == value.tobytes(), name


def files(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def set_age(store: WeightsStore, key: str, seconds_ago: float) -> None:
    """A file's last use, set outright: writes within one clock tick can share a modification time."""
    when = time.time() - seconds_ago
    os.utime(store.directory / f"{key}.npz", (when, when))


def test_a_second_store_on_the_same_directory_loads_what_the_first_put(tmp_path):
    model = small_model()
    key = WeightsStore(tmp_path).put(model)
    assert key == weights_id(model)
    assert files(tmp_path) == [f"{key}.npz"]
    loaded = WeightsStore(tmp_path).get(key)  # another process: nothing in its memory
    assert weights_id(loaded) == key and loaded.name == model.name and loaded.seed == model.seed
    assert loaded.config == model.config and loaded.vocab.tokens == model.vocab.tokens
    for name, value in model.params.items():
        np.testing.assert_array_equal(loaded.params[name], value)


def test_a_vision_transformer_goes_to_disk_and_back_bit_for_bit(tmp_path):
    model, origin = small_vit(3), {"kind": "vit_trained", "steps": 20}
    key = WeightsStore(tmp_path).put(model, origin)
    assert key == weights_id(model) and files(tmp_path) == [f"{key}.json", f"{key}.npz"]
    other = WeightsStore(tmp_path)  # another process: nothing in its memory
    assert_same_vit(other.get(key), model)
    assert other.origin(key) == origin
    _, facts = vit_train.load(tmp_path / f"{key}.npz")  # the engine's own weights file
    assert facts == {}


def test_a_vision_transformers_id_covers_its_image_sizes():
    """8 x 8 and 16 x 4 images in patches of 4 both make 4 patches of 16 pixels: the same parameters' shapes (the
    same numbers, from one seed), told apart by the sizes alone."""
    square, tall = small_vit(0), small_vit(0, height=16, width=4)
    assert {n: v.shape for n, v in square.params.items()} == {n: v.shape for n, v in tall.params.items()}
    assert weights_id(square) != weights_id(tall) != weights_id(small_vit(1))


def test_a_loaded_model_stays_in_memory(tmp_path):
    first, other = WeightsStore(tmp_path), WeightsStore(tmp_path)
    key = first.put(small_model())
    loaded = other.get(key)
    (tmp_path / f"{key}.npz").unlink()
    assert other.get(key) is loaded  # the rerun reads no disk
    assert first.get(key) is not None  # and the process that put it still has it
    assert WeightsStore(tmp_path).get(key) is None


def test_the_memory_keeps_the_most_recently_used(tmp_path):
    store = WeightsStore(tmp_path, memory=2)
    keys = [store.put(small_model(seed)) for seed in range(3)]
    for key in keys:
        (tmp_path / f"{key}.npz").unlink()
    assert [store.get(key) is not None for key in keys] == [False, True, True]


def test_the_least_recently_used_file_goes_when_there_are_too_many(tmp_path):
    store = WeightsStore(tmp_path, max_files=2)
    old, used = store.put(small_model(0)), store.put(small_model(1))
    set_age(store, old, 20)
    set_age(store, used, 30)
    assert WeightsStore(tmp_path).get(used) is not None  # a read is a use: now the newest
    new = store.put(small_model(2))
    assert files(tmp_path) == sorted([f"{used}.npz", f"{new}.npz"])


def test_the_oldest_files_go_when_they_hold_too_many_bytes(tmp_path):
    size = len(checkpoint.to_bytes(small_model()))
    store = WeightsStore(tmp_path, max_bytes=2 * size + size // 2)
    keys = [store.put(small_model(0)), store.put(small_model(1))]
    set_age(store, keys[0], 20)
    set_age(store, keys[1], 10)
    keys.append(store.put(small_model(2)))
    assert files(tmp_path) == sorted(f"{key}.npz" for key in keys[1:])
    assert sum(p.stat().st_size for p in tmp_path.iterdir()) <= store.max_bytes


def test_a_model_bigger_than_the_cap_stays_in_this_process_only(tmp_path):
    store = WeightsStore(tmp_path, max_bytes=1000)
    key = store.put(small_model())
    assert files(tmp_path) == []
    assert store.get(key) is not None and WeightsStore(tmp_path).get(key) is None


@pytest.mark.parametrize("damage", ["truncated", "garbage", "another model", "a pickle", "a vision transformer"])
def test_a_damaged_file_is_missing_and_removed(tmp_path, damage):
    model = small_model()
    key = weights_id(model)
    good = checkpoint.to_bytes(model)
    path = tmp_path / f"{key}.npz"
    if damage == "truncated":
        path.write_bytes(good[:len(good) // 2])
    elif damage == "garbage":
        path.write_bytes(b"\0" * 100)
    elif damage == "another model":  # a well-formed checkpoint whose weights are not the ones its name says
        path.write_bytes(checkpoint.to_bytes(small_model(seed=1)))
    elif damage == "a vision transformer":  # a well-formed ViT weights file under a text model's id
        vit_train.save(small_vit(), path)
    else:
        np.savez(path, meta=np.array([{"format": 1}], dtype=object))
    assert WeightsStore(tmp_path).get(key) is None
    assert not path.exists()


@pytest.mark.parametrize("key", ["../../etc/passwd", "0123456789AB", "0123456789a", "0123456789abc", "",
                                 "0123456789ab.npz", "/tmp/0123456789ab", "0123456789ab\n"])
def test_a_malformed_id_is_refused_without_touching_the_disk(tmp_path, key):
    directory = tmp_path / "weights"
    store = WeightsStore(directory)
    assert store.get(key) is None
    assert not directory.exists()


def test_an_id_that_was_never_put_is_missing(tmp_path):
    assert WeightsStore(tmp_path).get("0123456789ab") is None


def test_a_directory_that_cannot_be_written_keeps_the_weights_in_this_process(tmp_path):
    (tmp_path / "a file").write_text("")
    store = WeightsStore(tmp_path / "a file" / "weights")
    key = store.put(small_model())
    assert store.get(key) is not None


def test_a_temporary_file_left_by_a_dead_writer_is_cleaned_up(tmp_path):
    stale, fresh = tmp_path / ".dead.tmp", tmp_path / ".writing.tmp"
    stale.write_bytes(b"half")
    fresh.write_bytes(b"half")
    os.utime(stale, (0, 0))
    WeightsStore(tmp_path).put(small_model())
    assert not stale.exists() and fresh.exists()


def test_concurrent_puts_leave_whole_files_within_the_caps(tmp_path):
    models = [small_model(seed) for seed in range(6)]
    stores = [WeightsStore(tmp_path, max_files=4) for _ in range(3)]  # three "processes"
    keys, errors = [], []
    barrier = threading.Barrier(12)

    def put(store, model):
        try:
            barrier.wait()
            keys.append(store.put(model))
        except Exception as error:  # noqa: BLE001 (reported below)
            errors.append(error)

    threads = [threading.Thread(target=put, args=(stores[i % 3], models[i % 6])) for i in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert sorted(set(keys)) == sorted(weights_id(m) for m in models)
    on_disk = files(tmp_path)
    assert on_disk and len(on_disk) <= 4 and all(name.endswith(".npz") for name in on_disk)  # no temporary files
    for name in on_disk:
        assert WeightsStore(tmp_path).get(name[:-4]) is not None  # whole, and what its name says


def test_the_environment_sets_the_directory_and_the_caps(tmp_path):
    store = WeightsStore.from_environment({"TRANSFORMER_WEIGHTS_DIR": str(tmp_path), "TRANSFORMER_WEIGHTS_MAX_MB": "5",
                                           "TRANSFORMER_WEIGHTS_MAX_FILES": "7"})
    assert (store.directory, store.max_bytes, store.max_files) == (tmp_path, 5 * 2**20, 7)
    default = WeightsStore.from_environment({})
    assert default.directory == DEFAULT_DIR == ROOT / "build" / "weights"
    assert (default.max_bytes, default.max_files) == (2048 * 2**20, 200)


def test_the_weights_directory_is_left_out_of_git_and_docker():
    for ignore in (".gitignore", ".dockerignore"):
        lines = {line.strip().strip("/") for line in (ROOT / ignore).read_text().splitlines()}
        assert "build" in lines, ignore


def test_where_weights_came_from_is_kept_beside_them_and_goes_with_them(tmp_path):
    store = WeightsStore(tmp_path, max_files=1)
    trained = {"kind": "trained", "corpus": "en-zh", "steps": 40}
    key = store.put(small_model(0), trained)
    assert WeightsStore(tmp_path).origin(key) == trained  # another process reads the record on disk
    assert store.put(small_model(0), {"kind": "uploaded", "file": "mine.npz"}) == key
    assert WeightsStore(tmp_path).origin(key) == trained, "the same weights keep their first origin"
    store.put(small_model(1))
    assert files(tmp_path) == [f"{weights_id(small_model(1))}.npz"], "evicted with its weights"
    assert WeightsStore(tmp_path).origin(key) is None and WeightsStore(tmp_path).origin("../../etc") is None


@pytest.mark.parametrize("record", ['{"kind": "trained", "corpus": "en-es"}', '{"kind": "uploaded", "file": 3}',
                                    '{"kind": "trained", "corpus": "xx", "steps": 1}', '[1]', "not json"])
def test_a_malformed_origin_record_is_no_origin(tmp_path, record):
    key = WeightsStore(tmp_path).put(small_model())
    (tmp_path / f"{key}.json").write_text(record)
    assert WeightsStore(tmp_path).origin(key) is None


def test_weights_the_disk_cannot_keep_keep_their_origin_in_this_process(tmp_path):
    store = WeightsStore(tmp_path, max_bytes=1000)
    key = store.put(small_model(), {"kind": "uploaded", "file": "big.npz"})
    assert not store.on_disk(key) and files(tmp_path) == []
    assert store.origin(key) == {"kind": "uploaded", "file": "big.npz"}


# ---- the same store in Redis (RedisWeightsStore), for processes on several machines ---------------------------

@pytest.fixture
def redis(redis_url):
    client = redis_client({"TRANSFORMER_REDIS_URL": redis_url})
    client.flushdb()
    return client


def test_a_second_redis_store_loads_what_the_first_put_with_its_origin(redis):
    model, trained = small_model(), {"kind": "trained", "corpus": "en-es", "steps": 40}
    key = RedisWeightsStore(redis).put(model, trained)
    other = RedisWeightsStore(redis)  # another process, on another machine: nothing in its memory
    loaded = other.get(key)
    assert other.on_disk(key) and weights_id(loaded) == key and other.origin(key) == trained
    for name, value in model.params.items():
        np.testing.assert_array_equal(loaded.params[name], value)


def test_a_vision_transformer_goes_to_redis_and_back_bit_for_bit(redis):
    model, origin = small_vit(5), {"kind": "vit_trained", "steps": 20}
    key = RedisWeightsStore(redis).put(model, origin)
    other = RedisWeightsStore(redis)  # another process, on another machine
    assert other.on_disk(key) and other.origin(key) == origin
    assert_same_vit(other.get(key), model)
    redis.set(f"{REDIS_PREFIX}weights:{key}", redis.get(f"{REDIS_PREFIX}weights:{other.put(small_vit(6))}"))
    assert RedisWeightsStore(redis).get(key) is None, "a ViT that is not what its id says is refused"


def test_the_least_recently_used_weights_leave_redis_first(redis):
    store = RedisWeightsStore(redis, max_files=2)
    old, used = store.put(small_model(0)), store.put(small_model(1))
    RedisWeightsStore(redis).get(old)  # used by another process: now the most recent
    new = store.put(small_model(2))
    assert [RedisWeightsStore(redis).get(k) is not None for k in (old, used, new)] == [True, False, True]
    assert not redis.exists(f"{REDIS_PREFIX}weights:{used}")


def test_weights_bigger_than_the_redis_cap_stay_in_this_process(redis):
    store = RedisWeightsStore(redis, max_bytes=1000)
    key = store.put(small_model(), {"kind": "uploaded", "file": "big.npz"})
    assert not store.on_disk(key) and RedisWeightsStore(redis).get(key) is None and store.get(key) is not None
    assert redis.keys(f"{REDIS_PREFIX}weights*") == []


def test_damaged_weights_in_redis_are_missing_and_removed(redis):
    key = RedisWeightsStore(redis).put(small_model(0))
    redis.set(f"{REDIS_PREFIX}weights:{key}", b"PK\x03\x04 not a zip")
    assert RedisWeightsStore(redis).get(key) is None and not RedisWeightsStore(redis).on_disk(key)
    other = RedisWeightsStore(redis).put(small_model(1))
    redis.set(f"{REDIS_PREFIX}weights:{key}", redis.get(f"{REDIS_PREFIX}weights:{other}"))  # not what its id says
    assert RedisWeightsStore(redis).get(key) is None
    assert RedisWeightsStore(redis).get("../../etc/x") is None and RedisWeightsStore(redis).origin("*") is None


def test_a_redis_that_does_not_answer_keeps_the_weights_in_this_process():
    store = RedisWeightsStore(redis_client({"TRANSFORMER_REDIS_URL": f"redis://127.0.0.1:{free_port()}/0"}))
    key = store.put(small_model())
    assert store.get(key) is not None and not store.on_disk(key) and RedisWeightsStore(store.client).get(key) is None


def test_the_environment_chooses_redis_for_the_weights(redis_url):
    store = WeightsStore.from_environment({"TRANSFORMER_REDIS_URL": redis_url, "TRANSFORMER_WEIGHTS_MAX_FILES": "7"})
    assert isinstance(store, RedisWeightsStore) and store.max_files == 7
