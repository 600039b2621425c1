"""Probe definitions, their registry and the one job runner: the only layer that ties rows, scorers, measures
and reports together.

* ``base``: what a probe definition is (``ProbeDefinition``) and the options every run shares (``RunOptions``).
* ``unqover``, ``nli``, ``eec``: the three published probes (and custom UnQover-style probes from YAML files).
* ``registry``: the probes by name; the CLI, the Space and the reports ask here.
* ``job``: load -> select -> score -> predictions -> measure -> results.json -> reports, for any definition.
* ``precision``: quick runs in rounds until the intervals are narrow enough.
"""
