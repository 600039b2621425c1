"""Names the probe definitions offer as choices before any model code loads: the model families of Beecher's
emotion probe besides transformers, his scoring modes and the emotion probe's length rules."""

#: ``tfidf:CORPUS`` and ``glove:VECTORS`` (``unqover.scoring.beecher``)
BEECHER_FAMILIES = ("tfidf", "glove")
#: ``--scoring paper`` reproduces his code; ``default`` fixes its quirks
BEECHER_MODES = ("paper", "default")
#: how the emotion probe ranks a question's choice sentences (``unqover.scoring.eec.rank_choices``)
LENGTH_RULES = ("mean", "sum")
