"""Upload a checked plan (a dataset or a Gradio Space) to the Hugging Face Hub in one commit.

:func:`publish` creates the repo (``exist_ok=True``) and makes one commit that adds exactly the planned files and
deletes remote files that are no longer part of it (an older build with more shards would otherwise be picked up by
the same globs). Network use is bounded and never ends in a traceback: offline mode fails at once without a
request, every HTTP call gets connect/read timeouts, and Hub/transport errors become
:class:`~unqover.errors.UnqoverError` with a message that says what to do.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import PurePosixPath
from typing import Any

from unqover.env import HUB_TIMEOUT
from unqover.errors import UnqoverError
from unqover.hub.publish.common import OFFLINE_MESSAGE, TOKEN_MESSAGE, _is_upload_noise
from unqover.hub.publish.datasets import UploadPlan
from unqover.hub.publish.space_card import SpacePlan


def _is_true(value: str | None) -> bool:
    return (value or "").strip().upper() in {"1", "ON", "YES", "TRUE"}


def hub_offline() -> bool:
    """Offline as the user asked now (environment) or as huggingface_hub decided at import time.

    Only the Hub's own switches count (not ``HF_DATASETS_OFFLINE``, which is about downloads), so the
    message can name the one variable to change.
    """
    if _is_true(os.environ.get("HF_HUB_OFFLINE")) or _is_true(os.environ.get("TRANSFORMERS_OFFLINE")):
        return True
    try:
        from huggingface_hub import constants

        return bool(constants.is_offline_mode())
    except (ImportError, AttributeError):
        return False


def transport_errors() -> tuple[type[BaseException], ...]:
    """Exception types of the HTTP stack huggingface_hub uses (httpx2 in 2.x, httpx or requests before)."""
    errors: list[type[BaseException]] = [OSError, ValueError]
    for module in ("httpx2", "httpx"):
        try:
            mod = __import__(module)
        except ImportError:
            continue
        errors += [
            getattr(mod, name) for name in ("HTTPError", "InvalidURL", "StreamError") if hasattr(mod, name)
        ]
    return tuple(errors)


@contextmanager
def bounded_http(timeout: float) -> Iterator[None]:
    """Give huggingface_hub's shared HTTP client connect/read/write timeouts (it uses none by default).

    huggingface_hub 2.x makes most Hub API calls through one shared ``httpx2.Client`` created with
    ``timeout=None``, so an unresponsive endpoint would hang forever. We wrap the current client factory
    (keeping any user proxy/certificate setup), set a timeout on the clients it makes, and restore it after.
    """
    try:
        import huggingface_hub
        from huggingface_hub.utils import _http
    except ImportError:  # pragma: no cover - huggingface_hub is a dependency
        yield
        return
    previous = getattr(_http, "_GLOBAL_CLIENT_FACTORY", None)
    set_factory = getattr(huggingface_hub, "set_client_factory", None)
    timeout_type = None
    for module in ("httpx2", "httpx"):
        try:
            timeout_type = __import__(module).Timeout
            break
        except (ImportError, AttributeError):
            continue
    if previous is None or set_factory is None or timeout_type is None:
        yield  # an older huggingface_hub (requests-based) already sets per-request timeouts
        return

    def factory() -> Any:
        client = previous()
        client.timeout = timeout_type(timeout, connect=min(timeout, 10.0))
        return client

    set_factory(factory)
    try:
        yield
    finally:
        set_factory(previous)


def hub_token(token: str | None) -> str:
    """``token``, else ``HF_TOKEN`` or the stored login; one line when there is none."""
    import huggingface_hub

    if token is None:
        try:
            token = huggingface_hub.get_token()
        except (*transport_errors(), RuntimeError) as exc:
            raise UnqoverError(f"could not read the Hugging Face token: {exc}; {TOKEN_MESSAGE}") from exc
    if not token:
        raise UnqoverError(TOKEN_MESSAGE)
    return token


def _network_error(
    exc: BaseException, plan: UploadPlan | SpacePlan, endpoint: str, timeout: float
) -> UnqoverError:
    """Turn a Hub or transport failure into one clear sentence that says what to do."""
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

    if isinstance(exc, OfflineModeIsEnabled):
        return UnqoverError(OFFLINE_MESSAGE)
    first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    if isinstance(exc, HfHubHTTPError):
        status = getattr(getattr(exc, "response", None), "status_code", None)
        if status == 401:
            return UnqoverError(
                f"the Hub at {endpoint} rejected the token (HTTP 401): run `hf auth login` again, "
                "or pass --token / set HF_TOKEN to a valid token with write access"
            )
        if status == 403:
            namespace = plan.repo_id.split("/")[0]
            return UnqoverError(
                f"the token may not write to {plan.repo_id!r} (HTTP 403): use a token with write access to the "
                f"{namespace!r} namespace, or choose another with --namespace"
            )
        return UnqoverError(f"publishing {plan.repo_id} to {endpoint} failed (HTTP {status}): {first_line}")
    if "Timeout" in type(exc).__name__ or isinstance(exc, TimeoutError):
        return UnqoverError(
            f"no answer from the Hugging Face Hub at {endpoint} within {timeout:g} s while publishing "
            f"{plan.repo_id}; check your connection (or raise --timeout); use --dry-run to validate offline"
        )
    if isinstance(exc, ValueError) and not isinstance(exc, OSError):
        # e.g. the Hub's /api/validate-yaml rejecting the card: keep every line of its explanation
        return UnqoverError(f"cannot publish {plan.repo_id}: {str(exc).strip() or type(exc).__name__}")
    return UnqoverError(
        f"cannot reach the Hugging Face Hub at {endpoint} ({type(exc).__name__}: {first_line}); check your "
        "connection, HF_ENDPOINT and proxy settings; use --dry-run to validate without uploading"
    )


def _operations(plan: UploadPlan | SpacePlan, remote: Sequence[str]) -> list[Any]:
    """The commit: add every planned file, delete remote files the local folder no longer has.

    A dataset deletes stale files under ``data/`` only (older shards would match the card's globs). A Space
    mirrors its folder: every other remote file goes too (a removed helper module would otherwise still be
    imported), except the Hub's ``.gitattributes`` and other hidden files.
    """
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete

    planned = {f.path_in_repo for f in plan.files}
    if isinstance(plan, UploadPlan):
        stale = [path for path in remote if path.startswith("data/") and path not in planned]
    else:
        stale = [path for path in remote if path not in planned and not _is_upload_noise(PurePosixPath(path))]
    operations: list[Any] = [CommitOperationDelete(path_in_repo=path) for path in sorted(stale)]
    operations += [
        CommitOperationAdd(path_in_repo=f.path_in_repo, path_or_fileobj=str(f.local_path)) for f in plan.files
    ]
    return operations


def publish(
    plan: UploadPlan | SpacePlan,
    token: str | None = None,
    private: bool = False,
    *,
    endpoint: str | None = None,
    timeout: float = HUB_TIMEOUT,
    api: Any = None,
) -> str:
    """Create the Hub repo of ``plan`` (a dataset, or a Gradio Space) and commit exactly its files; return its URL.

    ``endpoint`` overrides ``HF_ENDPOINT`` (e.g. a private Hub). ``api`` replaces ``huggingface_hub.HfApi``
    (tests inject a fake). Stale remote files are deleted in the same commit (see :func:`_operations`), so
    an older build cannot leak into ``load_dataset`` or a Space. Raises UnqoverError when offline, without a
    token, or on any Hub/network failure; every HTTP call waits at most ``timeout`` s.
    """
    if hub_offline():
        raise UnqoverError(OFFLINE_MESSAGE)
    try:
        import huggingface_hub
    except ImportError as exc:  # pragma: no cover - huggingface_hub is a dependency
        raise UnqoverError(f"publishing needs huggingface_hub: pip install huggingface_hub ({exc})") from exc

    errors = transport_errors()
    token = hub_token(token)

    if api is None:
        api = huggingface_hub.HfApi(endpoint=endpoint, token=token)
    endpoint = str(getattr(api, "endpoint", None) or endpoint or "the configured endpoint")
    repo_id, repo_type = plan.repo_id, plan.repo_type
    if isinstance(plan, UploadPlan):
        rows = ", ".join(f"{c.name}: {c.num_rows:,} rows" for c in plan.configs)
        what, description = f"{len(plan.configs)} configs", f"Configs: {rows}."
        create: dict[str, Any] = {}
    else:
        what, description = plan.kind, f"{plan.short_description} (Gradio {plan.sdk_version})."
        create = {"space_sdk": "gradio"}
    try:
        from unqover import __version__
    except ImportError:  # pragma: no cover
        __version__ = "unknown"

    try:
        with bounded_http(timeout):
            api.create_repo(
                repo_id, repo_type=repo_type, exist_ok=True, private=private, token=token, **create
            )
            remote = api.list_repo_files(repo_id, repo_type=repo_type, token=token)
            api.create_commit(
                repo_id,
                _operations(plan, remote),
                commit_message=f"Upload {repo_id} ({what}) with unqover {__version__}",
                commit_description=description,
                repo_type=repo_type,
                token=token,
            )
    except UnqoverError:
        raise
    except (*errors, RuntimeError) as exc:
        raise _network_error(exc, plan, endpoint, timeout) from exc
    base = endpoint if endpoint.startswith("http") else "https://huggingface.co"
    return f"{base.rstrip('/')}/{repo_type}s/{repo_id}"
