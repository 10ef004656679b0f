"""The names of real translators the server loads (ui/stores/models.py): only folders of its models directory, or Hub
ids fetched into it; a name that would make the server read another file is refused (fast tier: no app, no PyTorch)."""
import os

import pytest

from engine.config import ConfigError
from ui.stores import models


@pytest.fixture
def directory(tmp_path):
    """models/ with two folders (one an owner/name), beside outside/, a folder the server must not read."""
    root = tmp_path / "models"
    for name in ("opus-mt-en-zh", "Helsinki-NLP/opus-mt-en-de"):
        (root / name).mkdir(parents=True)
        (root / name / "config.json").write_text("{}")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret").write_text("not a model")
    return root


@pytest.mark.parametrize("typed, name", [("opus-mt-en-zh", "opus-mt-en-zh"), (" Helsinki-NLP/opus-mt-en-zh ",
                                                                             "Helsinki-NLP/opus-mt-en-zh")])
def test_a_folder_or_a_hub_id_is_a_name(directory, typed, name):
    assert models.model_name(typed, directory) == name


def test_an_absolute_path_inside_the_directory_is_its_folder(directory):
    assert (models.model_name(str(directory / "Helsinki-NLP" / "opus-mt-en-de"), directory)
            == "Helsinki-NLP/opus-mt-en-de")
    assert models.model_name(str(directory) + "/x/../opus-mt-en-zh", directory) == "opus-mt-en-zh"


@pytest.mark.parametrize("typed", ["..", "../outside", "a/..", "./a", "a/b/c", "/etc", "/etc/passwd", "a\\..\\b",
                                   "", "~/models", "a b", "https://huggingface.co/Helsinki-NLP/opus-mt-en-zh",
                                   "x" * 97, "a//b"])
def test_a_name_that_leads_elsewhere_is_refused(directory, typed):
    with pytest.raises(ConfigError) as refused:
        models.model_name(typed, directory)
    assert refused.value.code == "marian_name"


def test_an_absolute_path_outside_the_directory_is_refused(directory):
    with pytest.raises(ConfigError):
        models.model_name(str(directory.parent / "outside"), directory)
    with pytest.raises(ConfigError):
        models.model_name(str(directory) + "/../outside", directory)


def test_a_symbolic_link_out_of_the_directory_is_refused(directory):
    os.symlink(directory.parent / "outside", directory / "escape")
    with pytest.raises(ConfigError) as refused:
        models.load("escape", directory)
    assert refused.value.code == "marian_outside"
    folder = directory / "opus-mt-en-zh"
    os.symlink(directory.parent / "outside" / "secret", folder / "model.safetensors")
    with pytest.raises(ConfigError) as refused:
        models.inside(folder, directory)
    assert refused.value.code == "marian_outside" and refused.value.values["name"] == "opus-mt-en-zh/model.safetensors"


def test_a_link_inside_the_directory_is_followed(directory):
    os.symlink(directory / "opus-mt-en-zh", directory / "zh")
    assert models.inside(directory / "zh", directory) == directory / "zh"


def test_an_unknown_folder_names_the_ones_there_are(directory):
    with pytest.raises(ConfigError) as refused:
        models.load("opus-mt-en-fr", directory)
    assert refused.value.code == "marian_unknown"
    assert refused.value.values["names"] == "Helsinki-NLP/opus-mt-en-de, opus-mt-en-zh"


def test_the_link_takes_names_only():
    assert models.is_name("Helsinki-NLP/opus-mt-en-zh") and models.is_name("opus-mt-en-zh")
    assert not any(map(models.is_name, ["/etc", "..", "a/..", "a/b/c", ""]))


def test_the_directory_is_the_environments_or_the_checkouts():
    assert models.models_dir({"TRANSFORMER_MODELS_DIR": "/srv/models"}) == models.Path("/srv/models")
    assert models.models_dir({}) == models.DEFAULT_DIR and models.DEFAULT_DIR.name == "models"


def test_a_link_loads_only_a_folder_that_is_there(directory):
    models.check_present("Helsinki-NLP/opus-mt-en-de", directory)
    for name in ("Helsinki-NLP/opus-mt-en-zh", "../outside", "/etc"):
        with pytest.raises(ConfigError) as refused:
            models.check_present(name, directory)
        assert refused.value.code == "marian_not_here"
