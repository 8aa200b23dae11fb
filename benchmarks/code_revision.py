"""Print, check or record the revision of the offline judges' code (``judges/_revision.py``).

The embedded judges' versions end in ``+lex.<revision>``: a digest of the code that reads
words, figures and names, so results, caches and calibrated thresholds of one revision are
never taken for another's. Run it after changing that code::

    python benchmarks/code_revision.py            # print it; exit 1 when the record is stale
    python benchmarks/code_revision.py --write    # record it in judges/_revision.py

then rerun what names the version (the README's output, the benchmark outputs, the calibrated
thresholds in docs/assets).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ground_integrations.judges import _revision


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="record the digest in _revision.py")
    args = parser.parse_args(argv)
    current = _revision.current_digest()
    python = f"{sys.version_info[0]}.{sys.version_info[1]}"
    if not args.write:
        stale = current != _revision.LEXICAL_CODE
        print(f"{current} (recorded: {_revision.LEXICAL_CODE}{', stale' if stale else ''})")
        return 1 if stale else 0
    path = Path(_revision.__file__)
    text = path.read_text(encoding="utf-8")
    lines = {
        f'LEXICAL_CODE = "{_revision.LEXICAL_CODE}"': f'LEXICAL_CODE = "{current}"',
        f'COMPUTED_ON = "{_revision.COMPUTED_ON}"': f'COMPUTED_ON = "{python}"',
    }
    for old, new in lines.items():
        if old not in text:
            print(f"{path}: cannot find the line {old!r} to rewrite", file=sys.stderr)
            return 1
        text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")
    print(f"{_revision.LEXICAL_CODE} -> {current} (Python {python})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
