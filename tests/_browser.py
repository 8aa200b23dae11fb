"""Headless Chromium for the HTML tests and the docs' screenshots: render a page, record what
went wrong (script errors, failed loads, resources fetched) and how the page laid out.

Debian's ``chromium`` package; ``.ci/run`` installs it and sets ``GROUND_REQUIRE_CHROMIUM=1``,
so there a missing browser fails instead of skipping.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

CHROMIUM = next(
    (shutil.which(n) for n in ("chromium", "chromium-browser") if shutil.which(n)), None
)
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None and not os.environ.get("GROUND_REQUIRE_CHROMIUM"),
    reason="Debian's chromium is not installed (apt-get install -y chromium); .ci/run installs it",
)

#: Injected into a copy of the page: records script errors and failed loads (the capture phase
#: sees an <img>'s error event), measures the plots and every display fragment
#: (``.ground-display``), then writes what it saw into the DOM for --dump-dom.
PROBE = """<script>
window.__seen = [];
window.addEventListener("error", function (e) {
  var t = e.target;
  window.__seen.push(t && t !== window ? "load failed: " + (t.src || t.href || t.tagName)
                                      : "script error: " + e.message);
}, true);
window.addEventListener("load", function () {
  var all = function (sel, root) {
    return Array.prototype.slice.call((root || document).querySelectorAll(sel));
  };
  var sized = function (el) { var r = el.getBoundingClientRect();
                              return r.width > 0 && r.height > 0; };
  var figs = all("figure svg");
  var imgs = Array.prototype.slice.call(document.images);
  var out = document.createElement("pre");
  out.id = "probe";
  out.textContent = JSON.stringify({
    errors: window.__seen,
    svgs: figs.length,
    drawn: figs.filter(function (s) { var r = s.getBoundingClientRect();
                                      return r.width > 100 && r.height > 100; }).length,
    broken: imgs.filter(function (i) { return !(i.complete && i.naturalWidth > 0); })
                .map(function (i) { return i.src; }),
    resources: performance.getEntriesByType("resource").map(function (r) { return r.name; }),
    scripts: document.scripts.length,
    title: document.title,
    fragments: all(".ground-display").map(function (el) {
      var r = el.getBoundingClientRect();
      var box = el.parentElement.getBoundingClientRect();
      return {
        id: el.parentElement.id,
        width: r.width, height: r.height, left: r.left, right: r.right,
        box_left: box.left, box_right: box.right,
        overflow: el.scrollWidth - el.clientWidth,
        marks: all("mark", el).length,
        marks_drawn: all("mark", el).filter(sized).length,
        tables: all("table", el).length,
        text_colour: getComputedStyle(el).color,
        badge: (function () { var b = el.querySelector("span[style*='border-radius']");
                              if (!b) { return null; }
                              var s = getComputedStyle(b);
                              return {colour: s.color, background: s.backgroundColor,
                                      drawn: sized(b)}; })()
      };
    })
  });
  document.body.appendChild(out);
});
</script>"""


def chromium(*args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None, "chromium is not installed: apt-get install -y chromium"
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--hide-scrollbars",
        "--no-first-run",
        "--virtual-time-budget=5000",
    ]
    return subprocess.run(
        [CHROMIUM, *flags, *args], capture_output=True, text=True, timeout=120, check=False
    )


def probe(page: Path, tmp_path: Path, *, width: int = 1200) -> dict:
    """Open a copy of ``page`` with the probe injected; what it saw."""
    probed = tmp_path / f"probed-{page.name}"
    probed.write_text(
        page.read_text(encoding="utf-8").replace("<head>", "<head>" + PROBE, 1), encoding="utf-8"
    )
    done = chromium(f"--window-size={width},2000", "--dump-dom", probed.as_uri())
    found = re.search(r'<pre id="probe">(.*?)</pre>', done.stdout, re.DOTALL)
    assert found, f"chromium did not render the page: {done.stderr[-2000:]}"
    return json.loads(html.unescape(found.group(1)))


def screenshot(page: Path, png: Path, *, size: str = "1400,2600") -> None:
    png.unlink(missing_ok=True)
    done = chromium(f"--window-size={size}", f"--screenshot={png}", page.as_uri())
    assert png.exists() and png.stat().st_size > 10_000, done.stderr[-2000:]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
