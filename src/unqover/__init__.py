"""unqover: measure stereotyping bias in NLP models with underspecified-question probes.

Layers (data flows one way): ``lexicon`` (word lists) -> ``generate`` (probe rows)
-> ``hub`` (Hugging Face dataset folders and publishing) -> ``cli``.
"""

from unqover.errors import UnqoverError

__version__ = "0.1.0"
__all__ = ["UnqoverError", "__version__"]
