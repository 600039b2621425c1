"""Bias math on plain columns: no models, files or Hub. Every function documents its formula."""
