"""Probe definitions and their registry: what each probe is, the one layer that ties rows, scorers, measures and
reports together.

* ``base``: what a probe definition is (``ProbeDefinition``) and the options every run shares (``RunOptions``).
* ``readings`` and ``dataset_builder``: a definition's two parts, ``probe.results`` (``ProbeResults``: what its
  finished runs' results and predictions mean) and ``probe.builder`` (``DatasetBuilder``: its dataset folders);
  ``unqover_results``, ``nli_results``, ``eec_results``: the probes' own results parts.
* ``unqover``, ``nli``, ``eec``, ``eec_person``, ``custom``: the published probes (and UnQover-style probes from
  YAML files); ``*_rows`` modules load and check each probe's rows.
* ``registry``: the probes by name; the CLI, the Space and the reports ask here.
* ``unqover_rounds``: UnQover quick runs in rounds until the intervals are narrow enough.

The commands' jobs (running a probe, measuring, comparing, publishing) are ``unqover.jobs``.
"""
