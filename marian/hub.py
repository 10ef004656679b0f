"""A Marian checkpoint fetched by its Hub id (Helsinki-NLP/opus-mt-en-zh) with huggingface_hub: only the files the
loader reads (marian.folder.FILES; never pytorch_model.bin), into huggingface_hub's own cache, so a second load reads
the disk."""
from __future__ import annotations

from pathlib import Path

from engine.config import ConfigError

from .folder import FILES, GET_SAFETENSORS


def fetch(repo_id: str, revision: str | None = None, local_dir: Path | None = None) -> Path:
    """The folder holding the checkpoint's files (local_dir, if given: the app's models directory, which every
    process reads); refuses, saying how to fetch them elsewhere, when the Hub cannot be reached (offline) or the
    repository has no such files."""
    from huggingface_hub import snapshot_download  # here: only a Hub id needs it (2.6 s to import)
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError, OfflineModeIsEnabled

    try:
        folder = Path(snapshot_download(repo_id, revision=revision, allow_patterns=list(FILES),
                                        local_dir=local_dir))
    except (LocalEntryNotFoundError, OfflineModeIsEnabled, OSError) as error:
        raise ConfigError(f"cannot download {repo_id} here ({type(error).__name__}): this machine cannot reach the "
                          f"Hugging Face Hub. On a machine with a network, run\n{fetch_command(repo_id)}\nthen copy "
                          "the folder here and load the folder.", "marian_offline", repo=repo_id,
                          command=fetch_command(repo_id)) from None
    except HfHubHTTPError as error:
        raise ConfigError(f"the Hub refused {repo_id}: {error}", "marian_hub", repo=repo_id) from None
    if not (folder / "model.safetensors").is_file():  # its weights only as a pickle, which is not fetched
        raise ConfigError(f"{repo_id} has no model.safetensors at this revision. {GET_SAFETENSORS}",
                          "marian_no_safetensors", repo=repo_id)
    return folder


def fetch_command(repo_id: str) -> str:
    """A command that fetches the loader's files of a checkpoint into a folder named after it."""
    files = ", ".join(repr(name) for name in FILES)
    return (f"python -c \"from huggingface_hub import snapshot_download; snapshot_download('{repo_id}', "
            f"allow_patterns=[{files}], local_dir='{repo_id.rsplit('/', 1)[-1]}')\"")
