"""Human-readable views of results: terminal text now; tables, charts and HTML pages alongside."""
