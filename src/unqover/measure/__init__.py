"""Bias math on plain columns: no models, files or Hub. Every function documents its formula."""

#: the UnQover measure modes: ``default`` fixes the original code's known bugs, ``paper`` reproduces its numbers
#: (here, in a module that imports nothing, so the probe definitions can offer them without loading the math)
MODES = ("default", "paper")
