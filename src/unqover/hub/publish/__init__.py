"""Validate built dataset folders, the evaluate modules and the Space, and publish them to the Hugging Face Hub.

Publishing happens in two steps so that nothing half-checked ever reaches the Hub:

1. a plan: :func:`plan_upload` checks a built dataset folder (:mod:`.datasets`), :func:`plan_module` an evaluate
   module (:mod:`.modules`) and :func:`plan_space` the demo app (:mod:`.space`); the Space checks both share
   (front matter, ``requirements.txt``, Python files that parse) are in :mod:`.space_card`. Each returns exactly
   the files to send (an :class:`UploadPlan` or a :class:`SpacePlan`).
2. :func:`publish` (:mod:`.upload`) creates the repo and makes one commit with exactly the planned files, deleting
   remote files that are no longer part of it; network use is bounded and every failure is an
   :class:`~unqover.errors.UnqoverError` that says what to do.

The ``publish`` command (``unqover publish``: choose, check everything, print the plans, upload) is the job
layer's :mod:`unqover.jobs.publish`; ``evaluate.load("<namespace>/<name>")`` then resolves a module's Space.
What every plan shares (messages, repo ids, card front matter) is in :mod:`.common`.
"""

from __future__ import annotations

from unqover.hub.publish.common import (
    BUILD_HINT,
    CARD,
    OFFLINE_MESSAGE,
    TOKEN_MESSAGE,
    PlannedFile,
    is_repo_name,
    read_card_metadata,
    validate_repo_id,
)
from unqover.hub.publish.datasets import PlannedConfig, UploadPlan, discover_datasets, plan_upload
from unqover.hub.publish.modules import EVALUATE_BASES, discover_modules, plan_module
from unqover.hub.publish.space import plan_space
from unqover.hub.publish.space_card import GRADIO_MAJOR, SHORT_DESCRIPTION_MAX, SPACE_COLORS, SpacePlan
from unqover.hub.publish.upload import publish

__all__ = [
    "BUILD_HINT",
    "CARD",
    "EVALUATE_BASES",
    "GRADIO_MAJOR",
    "OFFLINE_MESSAGE",
    "SHORT_DESCRIPTION_MAX",
    "SPACE_COLORS",
    "TOKEN_MESSAGE",
    "PlannedConfig",
    "PlannedFile",
    "SpacePlan",
    "UploadPlan",
    "discover_datasets",
    "discover_modules",
    "is_repo_name",
    "plan_module",
    "plan_space",
    "plan_upload",
    "publish",
    "read_card_metadata",
    "validate_repo_id",
]
