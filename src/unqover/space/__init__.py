"""The Gradio Space: model checks, the live probe, the explorer and the results browser (``space/app.py`` is thin)."""
