"""Screenshots of the documentation site at desktop and phone widths, into ``docs/assets/``::

    .venv/bin/python -m tests.site_screenshots            # build the site, then screenshot it
    .venv/bin/python -m tests.site_screenshots --site DIR # screenshot a site built into DIR

It builds the site with ``mkdocs build --strict`` (extra ``[docs]``) and opens the built pages in
Debian's ``chromium``, headless and offline (``tests/_browser.py``), at 1280 and 390 pixels
wide: the landing page, a framework page and the API reference. Before each screenshot it
checks what a reader would see go wrong: a page wider than the screen, or a shell command cut
off at the column's edge (``overflow``); the tests run the same check.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from ._browser import CHROMIUM, chromium, screenshot

ROOT = Path(__file__).resolve().parents[1]
ASSETS = ROOT / "docs" / "assets"
#: (name, page of the built site)
PAGES = (
    ("home", "index.html"),
    ("langchain", "langchain/index.html"),
    ("reference", "reference/core/index.html"),
)
#: (name, window size): a laptop and a phone
WIDTHS = (("desktop", "1280,1000"), ("phone", "390,844"))

#: Measures, once the page has laid out, how far it overflows the window and which shell or
#: text blocks are wider than their box, then writes that into the DOM for --dump-dom.
PROBE = """<script>
window.addEventListener("load", function () {
  var blocks = Array.prototype.slice.call(document.querySelectorAll(
    ".language-bash pre > code, .language-text pre > code, .language-console pre > code"));
  var out = document.createElement("pre");
  out.id = "overflow-probe";
  out.textContent = JSON.stringify({
    page: document.documentElement.scrollWidth - window.innerWidth,
    shell: blocks.filter(function (b) { return b.scrollWidth > b.clientWidth + 1; })
                 .map(function (b) { return b.textContent.trim().slice(0, 60); })
  });
  document.body.appendChild(out);
});
</script>"""


def build(out: Path) -> Path:
    """``mkdocs build --strict`` into ``out``."""
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        raise SystemExit(f"mkdocs build --strict failed:\n{done.stderr[-4000:]}")
    return out


def overflow(site: Path, page: str, *, width: int) -> dict:
    """How far ``page`` of the built ``site`` overflows a window ``width`` pixels wide (``page``,
    in pixels; 0 or less fits), and the shell or text blocks cut off at their box's edge."""
    original = site / page
    probed = original.with_name(f"probed-{original.name}")  # beside it: its links still resolve
    text = original.read_text(encoding="utf-8")
    probed.write_text(text.replace("</head>", PROBE + "</head>", 1), encoding="utf-8")
    try:
        done = chromium(f"--window-size={width},900", "--dump-dom", probed.as_uri())
    finally:
        probed.unlink()
    found = re.search(r'<pre id="overflow-probe">(.*?)</pre>', done.stdout, re.DOTALL)
    assert found, f"chromium did not render {page}: {done.stderr[-2000:]}"
    return dict(json.loads(html.unescape(found.group(1))))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.site_screenshots", description=__doc__)
    parser.add_argument("--site", type=Path, help="a site already built (default: build one)")
    args = parser.parse_args(argv)
    if CHROMIUM is None:
        print("chromium is not installed: apt-get install -y chromium", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        site = args.site or build(Path(tmp) / "site")
        problems = []
        for name, page in PAGES:
            for label, size in WIDTHS:
                seen = overflow(site, page, width=int(size.split(",")[0]))
                if seen["page"] > 0 or seen["shell"]:
                    problems.append(f"{page} at {label} width: {seen}")
                png = ASSETS / f"site-{name}-{label}.png"
                screenshot(site / page, png, size=size)
                print(f"wrote {png.relative_to(ROOT)}")
    if problems:
        print("layout problems:\n" + "\n".join(problems), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
