"""Screenshot the HTML report of the bundled sample for the README (docs/images/report.png).

    .venv/bin/profsight explain --format html -o /tmp/r.html --force
    .venv/bin/python scripts/screenshot_report.py /tmp/r.html docs/images/report.png

Drives Debian's chromium through Playwright (as tests/test_html.py does), 1280 px wide, and
keeps the top of the page: the verdict, the findings, the step chart and the call tree.
"""

from __future__ import annotations

import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

WIDTH, HEIGHT = 1280, 1830
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


def main(page_path: str, png_path: str) -> None:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
        page.goto(Path(page_path).resolve().as_uri())
        page.wait_for_timeout(1000)
        page.screenshot(path=png_path, clip={"x": 0, "y": 0, "width": WIDTH, "height": HEIGHT})
        browser.close()


if __name__ == "__main__":
    main(*sys.argv[1:3])
