"""The page `toolpair map --html` writes, opened in real headless Chromium (Debian's
package, driven by Playwright): it loads nothing from anywhere, every break links to its
turn, the turn is scrolled to and marked, and the fix repair would make is shown."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from tests.support.mutations import claude_code as M
from toolpair.cli import main
from toolpair.demo import load_demo

CHROMIUM = os.environ.get("TOOLPAIR_CHROMIUM", "/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: the html env installs Debian's chromium")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        yield b
        b.close()


def open_page(browser: Browser, html_file: Path) -> tuple[Page, list[str], list[str]]:
    page = browser.new_page(viewport={"width": 1000, "height": 500})
    requests: list[str] = []
    errors: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(html_file.as_uri())
    return page, requests, errors


def in_viewport(page: Page, selector: str) -> bool:
    box: Any = page.evaluate(
        "s => { const r = document.querySelector(s).getBoundingClientRect();"
        " return [r.top, r.bottom, window.innerHeight]; }",
        selector,
    )
    top, bottom, height = box
    return bool(0 <= top < height and bottom > 0)


def test_session_page_links_each_break_to_its_turn(
    browser: Browser, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = tmp_path / "3f0c2d4e-1111-4222-8333-444455556666.jsonl"
    session.write_bytes(M.m_interrupt())
    out = tmp_path / "map.html"
    assert main(["map", str(session), "--html", str(out)]) == 1
    page, requests, errors = open_page(browser, out)
    try:
        # One request: the page itself. No fonts, styles, scripts or images from anywhere.
        assert requests == [out.as_uri()]
        assert errors == []
        assert page.locator("ol.turns > li").count() == 14
        assert page.locator("ol.turns > li.broken").count() == 1
        link = page.locator("ul.breaks a").first
        assert link.inner_text() == "messages.7"
        assert "tool_use" in page.locator("ul.breaks li").first.inner_text()
        assert "spliced result at messages.7" in page.locator("ul.fixes").inner_text()
        assert not in_viewport(page, "#m-13")
        link.click()
        page.wait_for_function("location.hash === '#m-7'")
        assert in_viewport(page, "#m-7")
        target = page.locator("#m-7")
        assert "broken" in (target.get_attribute("class") or "")
        style = page.evaluate("getComputedStyle(document.querySelector('#m-7')).outlineStyle")
        assert style == "solid"
        # A call links to the turn of its result.
        page.locator("#m-1 a").first.click()
        page.wait_for_function("location.hash === '#m-2'")
        assert in_viewport(page, "#m-2")
        assert requests == [out.as_uri()]
    finally:
        page.close()


def test_page_of_a_provider_request_body(
    browser: Browser, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = tmp_path / "openai.json"
    body.write_text(json.dumps(load_demo("openai")))
    out = tmp_path / "openai.html"
    assert main(["map", str(body), "--html", str(out)]) == 1
    page, requests, errors = open_page(browser, out)
    try:
        assert requests == [out.as_uri()] and errors == []
        breaks = page.locator("ul.breaks a")
        assert breaks.count() >= 1
        href = breaks.first.get_attribute("href") or ""
        assert page.locator(href).count() == 1
        assert page.locator("ul.fixes li").count() >= 1
    finally:
        page.close()


def test_clean_session_page_says_so(browser: Browser, tmp_path: Path) -> None:
    out = tmp_path / "clean.html"
    assert main(["map", str(M.LINEAR), "--html", str(out)]) == 0
    page, requests, errors = open_page(browser, out)
    try:
        assert requests == [out.as_uri()] and errors == []
        assert page.locator("p.ok").count() == 1
        assert page.locator("li.broken").count() == 0
    finally:
        page.close()
