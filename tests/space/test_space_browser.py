"""The Space in a real headless browser (Debian chromium driven by Playwright): a probe ends in a chart."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from unqover.space import render
from unqover.space.app import CHART_CSS, build_app

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]

pytestmark = pytest.mark.browser


def test_probe_in_a_browser_shows_the_charts(tmp_path, religion_qa_model, upstream_word_lists_path):
    from playwright.sync_api import sync_playwright

    assert CHROMIUM.is_file(), "install Debian chromium (apt-get install -y chromium)"
    model = religion_qa_model
    demo = build_app(
        [str(model)],
        tmp_path / "cache",
        word_lists=upstream_word_lists_path,
        resamples=20,
        default_bias="religion",
    )
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    demo.launch(
        server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True, css=CHART_CSS
    )
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 2000})
            page.goto(f"http://127.0.0.1:{port}/", wait_until="networkidle")
            page.get_by_role("button", name="Probe").click()
            page.wait_for_selector("#probe-charts svg", timeout=60_000)
            page.wait_for_function(
                "document.querySelector('#probe-status').innerText.includes('✓')", timeout=30_000
            )
            status = page.locator("#probe-status").inner_text()
            assert render.DONE in status and "religion" in status
            assert page.locator("#probe-charts svg").count() == 2
            assert "γ(x)" in page.locator("#probe-charts").inner_text()
            page.screenshot(path=str(tmp_path / "space.png"), full_page=True)
            browser.close()
    finally:
        demo.close()
    assert (tmp_path / "space.png").stat().st_size > 10_000
