"""Word lists: the upstream UnQover format (subjects, attributes, templates, fillers)."""

from unqover.lexicon.upstream import UPSTREAM_COMMIT, resolve_word_lists
from unqover.lexicon.wordlists import Attribute, Subject, Template, WordListError, WordLists

__all__ = [
    "UPSTREAM_COMMIT",
    "Attribute",
    "Subject",
    "Template",
    "WordListError",
    "WordLists",
    "resolve_word_lists",
]
