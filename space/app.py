"""The UnQover Space: all logic lives in the library (`unqover.space`); this file only starts it."""

from unqover.space.app import CHART_CSS, build_app

demo = build_app()

if __name__ == "__main__":
    demo.launch(css=CHART_CSS)
