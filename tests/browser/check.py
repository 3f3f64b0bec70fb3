"""Open every page of a built book in headless Chromium and report what a reader would run into.

The pages are served from 127.0.0.1 only, and Chromium is driven over the DevTools protocol.
For each page it records:

* requests to any other host (stopped inside the browser before they leave it, and reported);
* resources that fail to load (HTTP status 400 or more, or a network error) and images that
  did not load or decode;
* JavaScript errors: uncaught exceptions, ``console.error`` and the browser's own error log;
* links inside the site that lead to a missing file or to a missing ``#anchor``;
* images without alt text;

and, on request, saves a full-page screenshot. Outside the tests (after ``make html``)::

    python tests/browser/check.py _build/html --screenshots _build/screenshots
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import functools
import http.server
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit
from urllib.request import urlopen

import websocket

LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}
NETWORK_SCHEMES = {"http", "https", "ws", "wss", "ftp"}
VIEWPORT = {"width": 1280, "height": 900}
MAX_SCREENSHOT_HEIGHT = 12000  # CSS pixels; longer pages are cut there
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-default-apps", "--disable-extensions", "--mute-audio", "--hide-scrollbars",
    # Every frame in one process, so the page's request interception also sees iframes.
    "--disable-site-isolation-trials", "--disable-features=IsolateOrigins,site-per-process",
    # A second lock: no host name resolves, whatever slips past the interception.
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost",
    f"--window-size={VIEWPORT['width']},{VIEWPORT['height']}",
]
# Run in the page after it loaded: lazy images made eager, then what the checks need.
LAZY_TO_EAGER = "document.querySelectorAll('img[loading=lazy]').forEach(i => { i.loading = 'eager'; })"
COLLECT = """(() => {
  const src = i => i.getAttribute('src') || '(no src)';
  const imgs = Array.from(document.images);
  return {
    broken: imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(src),
    noalt: imgs.filter(i => !i.hasAttribute('alt')).map(src),
    links: Array.from(document.querySelectorAll('a[href]')).map(a => a.href),
  };
})()"""


def short(text: str, limit: int = 100) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def is_remote(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme in NETWORK_SCHEMES and (parts.hostname or "") not in LOCAL_HOSTS


def find_chromium() -> str | None:
    """Debian's Chromium on the PATH, else the newest Chromium that Playwright installed."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    cache = Path(os.environ.get("PLAYWRIGHT_BROWSERS_PATH", Path.home() / ".cache" / "ms-playwright"))
    builds = sorted(cache.glob("chromium-*/chrome-linux*/chrome"))
    return str(builds[-1]) if builds else None


def site_pages(html_dir: Path) -> list[str]:
    """Every HTML page of a built book, relative to ``html_dir`` (static assets and sources left out)."""
    pages = []
    for path in sorted(html_dir.rglob("*.html")):
        rel = path.relative_to(html_dir)
        if not rel.parts[0].startswith("_"):
            pages.append(rel.as_posix())
    return pages


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 (the base class's signature)
        pass


@contextlib.contextmanager
def serve(folder: Path):
    """Serve ``folder`` over HTTP on 127.0.0.1 (a free port); yields the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


class Chromium:
    """A headless Chromium with a fresh profile, and a DevTools session on its tab."""

    def __init__(self, executable: str, startup_timeout: float = 60):
        self.profile = Path(tempfile.mkdtemp(prefix="rcstudy-chromium-"))
        self.log = open(self.profile / "chromium.log", "wb")
        self.proc = subprocess.Popen(
            [executable, *FLAGS, f"--user-data-dir={self.profile}", "--remote-debugging-port=0", "about:blank"],
            stdout=self.log, stderr=subprocess.STDOUT)
        self.on_event = lambda message: None
        self._last_id = 0
        try:
            port = self._devtools_port(startup_timeout)
            with urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as answer:
                tab = next(t for t in json.load(answer) if t["type"] == "page")
            self.ws = websocket.create_connection(tab["webSocketDebuggerUrl"], timeout=30, suppress_origin=True)
        except BaseException:
            self.close()
            raise

    def _devtools_port(self, timeout: float) -> int:
        port_file = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            if port_file.is_file() and port_file.read_text().strip():
                return int(port_file.read_text().split()[0])
            time.sleep(0.1)
        self.log.flush()
        raise RuntimeError("Chromium did not open its DevTools port; its log says:\n"
                           + (self.profile / "chromium.log").read_text(errors="replace")[-2000:])

    def send(self, method: str, **params) -> int:
        """Send a command without waiting for its answer; returns its id."""
        self._last_id += 1
        self.ws.send(json.dumps({"id": self._last_id, "method": method, "params": params}))
        return self._last_id

    def call(self, method: str, **params) -> dict:
        """Send a command and return its result, handling the events that arrive meanwhile."""
        wanted = self.send(method, **params)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            message = self._receive(1.0)
            if message is None:
                continue
            if message.get("id") == wanted:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            if "method" in message:
                self.on_event(message)
        raise TimeoutError(f"Chromium did not answer {method}")

    def pump(self, seconds: float, until=lambda: False) -> None:
        """Handle events for ``seconds``, or until ``until()`` holds."""
        deadline = time.monotonic() + seconds
        while not until() and (left := deadline - time.monotonic()) > 0:
            message = self._receive(min(left, 0.1))
            if message and "method" in message:
                self.on_event(message)

    def _receive(self, timeout: float) -> dict | None:
        self.ws.settimeout(timeout)
        try:
            return json.loads(self.ws.recv())
        except websocket.WebSocketTimeoutException:
            return None

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.ws.close()
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@dataclass
class PageReport:
    page: str
    remote_requests: list[str] = field(default_factory=list)
    failed_resources: list[str] = field(default_factory=list)
    broken_images: list[str] = field(default_factory=list)
    js_errors: list[str] = field(default_factory=list)
    broken_links: list[str] = field(default_factory=list)
    images_without_alt: list[str] = field(default_factory=list)
    screenshot: Path | None = None

    LABELS = {
        "remote_requests": "request to a remote host",
        "failed_resources": "resource failed to load",
        "broken_images": "image missing or broken",
        "js_errors": "JavaScript error",
        "broken_links": "broken internal link",
        "images_without_alt": "image without alt text",
    }

    def problems(self) -> list[str]:
        return [f"{self.page}: {label}: {short(item)}"
                for key, label in self.LABELS.items() for item in getattr(self, key)]


class _Anchors(HTMLParser):
    def __init__(self):
        super().__init__()
        self.names: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for key, value in attrs:
            if value and (key == "id" or (key == "name" and tag == "a")):
                self.names.add(value)


class SiteChecker:
    """Visits pages of the site in ``html_dir`` served at ``base`` with one browser."""

    def __init__(self, browser: Chromium, base: str, html_dir: Path):
        self.browser, self.base, self.html_dir = browser, base, html_dir
        self._anchors: dict[Path, set[str]] = {}
        for method in ("Page.enable", "Network.enable", "Runtime.enable", "Log.enable"):
            browser.call(method)
        browser.call("Network.setCacheDisabled", cacheDisabled=True)
        browser.call("Fetch.enable", patterns=[{"urlPattern": "*"}])
        browser.call("Emulation.setDeviceMetricsOverride", deviceScaleFactor=1, mobile=False, **VIEWPORT)

    def visit(self, page: str, screenshot: Path | None = None) -> PageReport:
        report = PageReport(page)
        urls: dict[str, str] = {}
        in_flight: set[str] = set()
        loaded = []

        def on_event(message):
            method, p = message["method"], message.get("params", {})
            if method == "Fetch.requestPaused":
                url = p["request"]["url"]
                if is_remote(url):
                    report.remote_requests.append(url)
                    self.browser.send("Fetch.failRequest", requestId=p["requestId"], errorReason="BlockedByClient")
                else:
                    self.browser.send("Fetch.continueRequest", requestId=p["requestId"])
            elif method == "Network.requestWillBeSent":
                urls[p["requestId"]] = p["request"]["url"]
                in_flight.add(p["requestId"])
            elif (method == "Network.responseReceived" and p["response"]["status"] >= 400
                  and urlsplit(p["response"]["url"]).path != "/favicon.ico"):  # the browser's, not the page's
                report.failed_resources.append(f"{p['response']['url']} (HTTP {p['response']['status']})")
            elif method == "Network.loadingFinished":
                in_flight.discard(p["requestId"])
            elif method == "Network.loadingFailed":
                in_flight.discard(p["requestId"])
                url = urls.get(p["requestId"], "?")
                if not is_remote(url) and not p.get("canceled"):
                    report.failed_resources.append(f"{url} ({p.get('errorText')})")
            elif method == "Runtime.exceptionThrown":
                d = p["exceptionDetails"]
                text = d.get("exception", {}).get("description") or d.get("text", "")
                report.js_errors.append(f"{text} ({d.get('url', page)}:{d.get('lineNumber', 0) + 1})")
            elif method == "Runtime.consoleAPICalled" and p["type"] in ("error", "assert"):
                args = " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
                report.js_errors.append(f"console.{p['type']}: {args}")
            elif method == "Log.entryAdded" and p["entry"]["level"] == "error" and p["entry"]["source"] != "network":
                report.js_errors.append(f"{p['entry']['source']}: {p['entry']['text']}")
            elif method == "Page.loadEventFired":
                loaded.append(True)

        self.browser.on_event = on_event
        answer = self.browser.call("Page.navigate", url=f"{self.base}/{page}")
        if answer.get("errorText"):
            report.failed_resources.append(f"{page} ({answer['errorText']})")
            return report
        self.browser.pump(30, until=lambda: bool(loaded))
        if not loaded:
            report.failed_resources.append(f"{page} (did not finish loading within 30 s)")
        self._evaluate(LAZY_TO_EAGER, loaded)
        self._settle(in_flight)
        found = self._evaluate(COLLECT, loaded, returnByValue=True)["result"]["value"]
        report.broken_images += found["broken"]
        report.images_without_alt += found["noalt"]
        report.broken_links += sorted({problem for href in found["links"] if (problem := self._link_problem(href))})
        if screenshot is not None:
            report.screenshot = self._screenshot(screenshot)
        self.browser.on_event = lambda message: None
        return report

    def _evaluate(self, expression: str, loaded: list, **options) -> dict:
        """Evaluate in the page; a page that redirects itself (index.html) is followed first."""
        for _ in range(3):
            try:
                return self.browser.call("Runtime.evaluate", expression=expression, **options)
            except RuntimeError as e:
                if "navigated or closed" not in str(e):
                    raise
                loaded.clear()
                self.browser.pump(30, until=lambda: bool(loaded))
        return self.browser.call("Runtime.evaluate", expression=expression, **options)

    def _settle(self, in_flight: set[str], quiet: float = 0.3, limit: float = 15) -> None:
        """Wait until no request has been in flight for ``quiet`` seconds (scripts may load more)."""
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            self.browser.pump(quiet)
            if not in_flight:
                return

    def _link_problem(self, href: str) -> str | None:
        parts = urlsplit(href)
        if f"{parts.scheme}://{parts.netloc}" != self.base:
            return None
        target = self.html_dir / unquote(parts.path).lstrip("/")
        if target.is_dir():
            target = target / "index.html"
        if not target.is_file():
            return f"{href} (no such file)"
        fragment = unquote(parts.fragment)
        if fragment and target.suffix == ".html" and fragment not in self._anchor_names(target):
            return f"{href} (no #{fragment} in {target.relative_to(self.html_dir).as_posix()})"
        return None

    def _anchor_names(self, path: Path) -> set[str]:
        if path not in self._anchors:
            parser = _Anchors()
            parser.feed(path.read_text(encoding="utf-8", errors="replace"))
            self._anchors[path] = parser.names
        return self._anchors[path]

    def _screenshot(self, path: Path) -> Path:
        """The whole page: the viewport is stretched to the page's height for the shot (Chromium's
        own capture beyond the viewport shifts this theme's layout sideways)."""
        size = self.browser.call("Page.getLayoutMetrics")["cssContentSize"]
        height = max(VIEWPORT["height"], min(math.ceil(size["height"]), MAX_SCREENSHOT_HEIGHT))
        metrics = {"deviceScaleFactor": 1, "mobile": False, "width": VIEWPORT["width"]}
        self.browser.call("Emulation.setDeviceMetricsOverride", **metrics, height=height)
        try:
            self.browser.pump(0.3)  # let the layout settle at the new height
            shot = self.browser.call("Page.captureScreenshot", format="png")
        finally:
            self.browser.call("Emulation.setDeviceMetricsOverride", **metrics, height=VIEWPORT["height"])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(shot["data"]))
        return path


def check_site(html_dir: Path, pages: list[str], executable: str, *, screenshots: Path | None = None,
               screenshot_pages: set[str] | None = None) -> list[PageReport]:
    """Visit ``pages`` of the site in ``html_dir``; screenshots of ``screenshot_pages`` (default all)
    go to ``screenshots/<page>.png``."""
    html_dir = Path(html_dir).resolve()
    wanted = set(pages) if screenshot_pages is None else screenshot_pages
    with serve(html_dir) as base, Chromium(executable) as browser:
        checker = SiteChecker(browser, base, html_dir)
        return [checker.visit(page, screenshots / Path(page).with_suffix(".png")
                              if screenshots is not None and page in wanted else None)
                for page in pages]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("html_dir", type=Path, help="the built book, e.g. _build/html")
    parser.add_argument("--screenshots", type=Path, default=None, help="folder for one screenshot per page")
    args = parser.parse_args(argv)
    executable = find_chromium()
    if executable is None:
        parser.error("Chromium is not installed (Debian: apt-get install -y chromium, or `make browser`)")
    reports = check_site(args.html_dir, site_pages(args.html_dir), executable, screenshots=args.screenshots)
    problems = [p for r in reports for p in r.problems()]
    print("\n".join(problems) or f"{len(reports)} pages checked: no problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
