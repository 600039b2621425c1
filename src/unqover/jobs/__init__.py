"""What each command does, above the probe definitions: run a probe (``run``), several probes (``multi``), measure
a predictions file (``measuring``), compare two runs, draw a sample, build, publish and upload datasets and
results, write lm-evaluation-harness tasks (and the hooks they call), and list what the Space explores."""
