"""Models on the Space's server, named without their paths.

A page never shows where a model lies on the server, whether its path is absolute (``/srv/models/qa``) or relative
(``secret-models/tiny.gguf``): a local model is named by its own name (the last part of its path: a GGUF file's
name, a folder's name), marked local (``tiny.gguf (local)``, as in docs/space.md); a Hub id is shown as it is.

- :func:`operator_models`: the operator's model list (``UNQOVER_SPACE_MODELS``) as the page's choices, each local
  entry by its name; a folder that is no model itself (a folder of models) offers the models in it: its model
  folders and its ``.gguf`` files whose header is valid;
- :func:`shown_record`: a model a run records (its provenance record, or its id) as the page names it;
- :func:`hide_models`: a text the page shows with each local model's path replaced by its name.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath, PureWindowsPath

from unqover.errors import UnqoverError, first_line
from unqover.jobs.models import gguf_record, is_gguf_name

_log = logging.getLogger(__name__)

LOCAL = "local"
_SEPARATORS = re.compile(r"[\\/]+")


def is_path(text: str) -> bool:
    """Whether a recorded model id can only be a place on a disk, never a Hub id (``owner/name``): absolute on any
    system, ``.`` or ``~`` first, a backslash, or more than one ``/``."""
    return (
        PurePosixPath(text).is_absolute()
        or bool(PureWindowsPath(text).drive)
        or text.startswith(("\\", "~", "."))
        or "\\" in text
        or text.count("/") > 1
    )


def local_label(path: str, number: int = 1) -> str:
    """``tiny.gguf (local)``: the last part of a path, marked local (``(local 2)`` for the second of that name)."""
    name = _SEPARATORS.split(path.rstrip("/\\"))[-1] or "a folder"
    return f"{name} ({LOCAL}{'' if number == 1 else f' {number}'})"


def recorded_local(model: object) -> bool:
    """Whether a recorded model (an id, or a provenance record) is a model of the machine that ran it: its record
    names the folder or file it was loaded from (``path``: what a run of a local model records), or its id is a
    path (:func:`is_path`)."""
    if isinstance(model, Mapping):
        ident = model.get("id") or model.get("name")
        return bool(model.get("path")) or (isinstance(ident, str) and is_path(ident))
    return isinstance(model, str) and is_path(model)


def shown_model(model: object, local: bool | None = None) -> str | None:
    """A recorded model id as the page names it: a Hub id as it is, a local model by its name marked local
    (``local``: whether it is one; default: whether its id is a path, :func:`is_path`)."""
    if not isinstance(model, str) or not model:
        return None if model in (None, "") else str(model)
    return local_label(model) if (is_path(model) if local is None else local) else model


def shown_record(model: object) -> str | None:
    """A recorded model (a provenance record, or an id) as the page names it: a Hub id as it is; a model of the
    server marked local by the last part of its path, or, for a folder holding a GGUF checkpoint, by the file's
    name."""
    if not isinstance(model, Mapping):
        return shown_model(model)
    ident = model.get("id") or model.get("name")
    if not recorded_local(model):
        return shown_model(ident, local=False)
    gguf = model.get("gguf")
    file = gguf.get("file") if isinstance(gguf, Mapping) else None
    folder = not is_gguf_name(str(ident)) and isinstance(file, str) and file
    return local_label(file if folder else str(ident))


def server_label(model: str, number: int = 1) -> str:
    """A model of this server as the page names it (:func:`shown_record` of the run it would record): a folder
    that holds one GGUF file and no config.json by that file's name, anything else by its own name."""
    path = Path(model).expanduser()
    if path.is_dir() and not (path / "config.json").is_file():
        held = _gguf_files(path)
        if len(held) == 1:
            return local_label(held[0].name, number)
    return local_label(model, number)


def local_ids(models: Iterable[object]) -> dict[str, str]:
    """Each local model's recorded id and path among ``models`` (ids or provenance records; adapters too), mapped
    to its name on the page."""
    found: dict[str, str] = {}
    for model in models:
        records = [model]
        if isinstance(model, Mapping) and isinstance(model.get("adapter"), Mapping | str):
            records.append(model["adapter"])
        for record in records:
            if not recorded_local(record):
                continue
            ident = (record.get("id") or record.get("name")) if isinstance(record, Mapping) else record
            if isinstance(ident, str) and ident:
                found[ident] = shown_record(record) or local_label(ident)
                path = record.get("path") if isinstance(record, Mapping) else None
                if isinstance(path, str) and path:
                    found[path] = found[ident]
    return found


def hide_models(text: str, names: Mapping[str, str]) -> str:
    """``text`` with each path of ``names`` (path -> its name on the page, :func:`local_ids`) replaced by its name,
    also as Markdown escapes it; a path is matched whole (not inside a longer path or word), with any path inside
    it. A bare name (no separator) is its own name already and is left as it is."""
    forms: dict[str, str] = {}
    for path, label in names.items():
        if _SEPARATORS.search(path):
            forms[path] = forms[path.replace("_", "\\_")] = label
    if not forms:
        return text
    alternatives = "|".join(re.escape(form) for form in sorted(forms, key=len, reverse=True))
    # a path inside the model's folder (its config.json, its GGUF file) is the model too: shown by its name
    pattern = re.compile(rf"(?<![\w.@+~/\\-])({alternatives})(?:[/\\][^\s'\"`,;:()]*|(?![\w@+~/\\-]|\.\w))")
    return pattern.sub(lambda m: forms[m.group(1)], text)


def path_forms(model: str, folder: bool = False) -> set[str]:
    """The ways a message may write a model of the server's path (as given, resolved; ``folder``: its folder's
    too, where a loader names the folder of a GGUF file), for :func:`hide_models`; none for a Hub id."""
    if not on_disk(model):
        return set()
    path = Path(model).expanduser()
    forms = {model, str(path), str(path.resolve())}
    if folder:
        forms |= {str(path.parent), str(path.parent.resolve())}
    return forms - {"", "."}


# ---------------------------------------------------------------------------------------------------------------
# the operator's list


def on_disk(text: str) -> bool:
    """Whether a model argument names something on this machine (a name too long or odd for the disk does not)."""
    try:
        return Path(text).expanduser().exists()
    except (OSError, ValueError, RuntimeError):
        return False


def _gguf_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file() and is_gguf_name(p.name))


def _is_model_folder(folder: Path) -> bool:
    """A folder the operator means as one model: a transformers folder (config.json), or one ``.gguf`` file and no
    config.json (as :func:`unqover.scoring.gguf.find_gguf` reads it) beside no model folder (a models folder
    holding one GGUF file and model folders offers them all)."""
    return _holds_model(folder) and (
        (folder / "config.json").is_file()
        or not any(child.is_dir() and _holds_model(child) for child in folder.iterdir())
    )


def _holds_model(folder: Path) -> bool:
    """A config.json, or one ``.gguf`` file: what the loaders read as a model."""
    return (folder / "config.json").is_file() or len(_gguf_files(folder)) == 1


def _valid_gguf(path: Path) -> bool:
    """Whether a GGUF file's header is whole and holds a tokenizer (:func:`unqover.scoring.gguf.gguf_record`);
    a file that fails is left out of the list, with the reason in the Space's log."""
    try:
        gguf_record(path)
    except (UnqoverError, OSError) as err:
        _log.warning("UNQOVER_SPACE_MODELS: %s left out: %s", path.name, first_line(err))
        return False
    return True


def _entries(entry: str) -> list[str]:
    """The models one entry of the operator's list offers: a Hub id, a model folder or a ``.gguf`` file (with a
    valid header) itself; a folder of models: its model folders and its valid ``.gguf`` files."""
    path = Path(entry).expanduser()
    if not on_disk(entry):
        return [entry]  # a Hub id
    if path.is_file():
        return [entry] if not is_gguf_name(path.name) or _valid_gguf(path) else []
    if not path.is_dir():
        return [entry]
    if _is_model_folder(path):
        held = _gguf_files(path)
        return [entry] if (path / "config.json").is_file() or _valid_gguf(held[0]) else []
    offered = []
    for child in sorted(path.iterdir()):
        if child.is_file() and is_gguf_name(child.name) and _valid_gguf(child):
            offered.append(str(child))
        elif child.is_dir() and _is_model_folder(child):
            offered += _entries(str(child))
    return offered


def _target(model: str) -> Path:
    """The file or folder a model of the server is read from, resolved: a folder's one GGUF file."""
    path = Path(model).expanduser()
    if path.is_dir() and not (path / "config.json").is_file() and len(_gguf_files(path)) == 1:
        path = _gguf_files(path)[0]
    return path.resolve()


def operator_models(entries: Sequence[str]) -> dict[str, str]:
    """The operator's model list as the page's choices: choice -> the model the loaders read (a Hub id as it is,
    a model of the server by :func:`server_label`), each file or folder once. Names alike are numbered
    (``tiny.gguf (local 2)``)."""
    choices: dict[str, str] = {}
    offered: set[Path] = set()
    for entry in entries:
        for model in _entries(entry):
            if not on_disk(model):
                choices.setdefault(model, model)
                continue
            target = _target(model)
            if (
                target in offered
            ):  # the same file or folder again (a folder holding one GGUF file is that file)
                continue
            offered.add(target)
            number = 1
            while server_label(model, number) in choices:
                number += 1
            choices[server_label(model, number)] = model
    return choices
