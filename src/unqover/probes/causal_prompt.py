"""The causal-LM prompt options every probe that prompts a causal LM takes (``--system-prompt``,
``--chat-template``): their definitions and checks, which were given, their refusal for models that answer no
continuations, and run.json's record of the prompt a run used."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from unqover.errors import UnqoverError
from unqover.options import Option
from unqover.scoring.requests import ANSWER_SPANS, CLASSES, CONTINUATIONS, FILL_IN, SENTENCES

#: ``--chat-template`` values that name no file (``unqover.scoring.causal.chat_renderer`` reads them)
CHAT_TEMPLATES = ("auto", "none")
AUTO, PLAIN = CHAT_TEMPLATES
PROMPT_OPTIONS = (
    Option(
        "--system-prompt",
        "causal LMs: a system message before every question (without a chat template: a paragraph before "
        "an UnQover prompt; the emotion and person probes need a template for it)",
        metavar="TEXT",
    ),
    Option(
        "--chat-template",
        "causal LMs: auto (the tokenizer's chat template, when it has one), none (plain prompts) or a Jinja "
        "template file (default: auto)",
        metavar="auto|none|FILE.jinja",
        default="auto",
    ),
)

#: a model in words by the first request it answers, for the options that apply to causal LMs only
CAPABILITY_WORDS = {
    ANSWER_SPANS: "an extractive QA model",
    FILL_IN: "a masked LM",
    CLASSES: "an NLI classifier",
    SENTENCES: "one of Beecher's own models (it scores sentences)",
}


def check_prompt_settings(settings: dict[str, Any]) -> None:
    """Read a ``--chat-template`` file (its resolved path, text and sha256 go in ``template_file``) and drop an
    empty ``--system-prompt``, in place."""
    from unqover.probes import options as parse

    template = settings["chat_template"]
    settings["template_file"] = None
    if template not in CHAT_TEMPLATES:
        path, text, sha256 = parse.chat_template_file(template)
        settings["chat_template"] = path
        settings["template_file"] = {"file": path, "sha256": sha256, "text": text}
    settings["system_prompt"] = settings["system_prompt"] or None


def plain_prompts(settings: Mapping[str, Any]) -> bool:
    """Whether ``--chat-template none`` asks for plain prompts (no chat template, whatever the tokenizer has)."""
    return settings.get("chat_template") == PLAIN


def chat_template_choice(settings: Mapping[str, Any]) -> str:
    """What the causal scorer renders with: a template file's text, else ``auto`` or ``none``."""
    template = settings.get("template_file")
    return template["text"] if template else settings.get("chat_template", "auto")


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


def check_prompt_engine(settings: Mapping[str, Any], engine, request) -> None:
    """:func:`check_prompt_model` before the weights load, where the ``engine`` reads what the requested model
    answers from its config (``request``: its :class:`unqover.scoring.requests.EngineRequest`)."""
    if prompt_options(settings):
        capabilities = engine.capabilities_of(request)
        if capabilities is not None:
            check_prompt_model(settings, capabilities, request.model_id)


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
