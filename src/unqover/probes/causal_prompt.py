"""The UnQover probes' causal-LM prompt options (``--system-prompt``, ``--chat-template``): which were given, their
refusal for models that answer no continuations, and run.json's record of the prompt a run used."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from unqover.errors import UnqoverError
from unqover.scoring.requests import ANSWER_SPANS, CLASSES, CONTINUATIONS, FILL_IN

#: a model in words by the first request it answers, for the options that apply to causal LMs only
CAPABILITY_WORDS = {
    ANSWER_SPANS: "an extractive QA model",
    FILL_IN: "a masked LM",
    CLASSES: "an NLI classifier",
}


def prompt_options(settings: Mapping[str, Any]) -> list[str]:
    """The causal-LM prompt options given (``--system-prompt``, a ``--chat-template`` other than auto)."""
    given = (
        ("--system-prompt", settings.get("system_prompt") is not None),
        ("--chat-template", settings.get("chat_template", "auto") != "auto"),
    )
    return [flag for flag, on in given if on]


def check_prompt_model(settings: Mapping[str, Any], capabilities: Sequence[str], model_id: str) -> None:
    """The prompt options apply to causal LMs (models that answer continuations): refuse them for another model
    (``capabilities``: what it answers), in one line."""
    given = prompt_options(settings)
    if given and CONTINUATIONS not in capabilities:
        verb = "apply" if len(given) > 1 else "applies"
        what = CAPABILITY_WORDS.get(capabilities[0], capabilities[0]) if capabilities else "no causal LM"
        raise UnqoverError(f"{' and '.join(given)} {verb} to causal LMs; {model_id} is {what}")


def prompt_record(settings: Mapping[str, Any], tokenizer) -> dict:
    """run.json's ``prompt`` of a causal-LM run: the ``--chat-template`` given (a file: its resolved path and
    sha256), the sha256 of the template used (None: plain prompts) and the system prompt."""
    import hashlib
    import json

    template_file = settings.get("template_file")
    choice = settings.get("chat_template", "auto")
    if template_file:
        chosen: Any = {"file": template_file["file"], "sha256": template_file["sha256"]}
        used = template_file["text"]
    else:
        chosen = choice
        used = getattr(tokenizer, "chat_template", None) if choice == "auto" else None
    if used is not None and not isinstance(used, str):  # named templates: a mapping of name -> text
        used = json.dumps(used, sort_keys=True)
    return {
        "chat_template": chosen,
        "template_sha256": hashlib.sha256(used.encode("utf-8")).hexdigest() if used else None,
        "system_prompt": settings.get("system_prompt"),
    }
