"""Which revision of the offline judges' code this is, as part of their versions.

The embedded judges' outputs depend on their code (how a sentence is split, which words count
as a figure or a name, the hard checks) as much as on their fitted numbers. A judge's version
names both, so results, caches and calibrated thresholds of one revision are never taken for
another's. The revision is a digest of the code of the modules in :data:`MODULES`, read as
Python syntax: comments, docstrings and layout do not change it, a changed word list or rule
does.

:data:`LEXICAL_CODE` is recorded here rather than computed at import, so loading a judge reads
no source. A test recomputes it and fails, naming the command below, when the code moved on
and the record did not::

    python benchmarks/code_revision.py --write
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterable
from pathlib import Path

__all__ = [
    "COMPUTED_ON",
    "LEXICAL_CODE",
    "MODULES",
    "code_digest",
    "current_digest",
    "module_paths",
]

#: the digest of :data:`MODULES`' code, 8 hex digits (written by benchmarks/code_revision.py)
LEXICAL_CODE = "a36b84cc"
#: the Python (major.minor) it was computed on: ``ast.unparse`` may differ between releases
COMPUTED_ON = "3.11"

_PACKAGE = Path(__file__).resolve().parent.parent

#: the modules whose code decides the offline judges' outputs, relative to the package root
MODULES: tuple[str, ...] = (
    "_markers.py",
    "text.py",
    "judges/_analysis.py",
    "judges/_checks.py",
    "judges/_dates.py",
    "judges/_features.py",
    "judges/_figures.py",
    "judges/_fitted.py",
    "judges/_framing.py",
    "judges/_hours.py",
    "judges/_index.py",
    "judges/_initialisms.py",
    "judges/_language.py",
    "judges/_language_detection.py",
    "judges/_lexicon.py",
    "judges/_name_forms.py",
    "judges/_narrowing.py",
    "judges/_profiles.py",
    "judges/_ranking.py",
    "judges/_records.py",
    "judges/_search.py",
    "judges/_spans.py",
    "judges/_structure/__init__.py",
    "judges/_structure/_claims.py",
    "judges/_structure/_names.py",
    "judges/_structure/_negations.py",
    "judges/_structure/_ranks.py",
    "judges/_structure/_words.py",
    "judges/_tokens.py",
    "judges/_window.py",
    "judges/cross_encoder.py",
    "judges/heuristic.py",
)


def module_paths(root: Path | None = None) -> list[Path]:
    """The files of :data:`MODULES` under ``root`` (the installed package by default)."""
    return [(root if root is not None else _PACKAGE) / name for name in MODULES]


def _without_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                # keep the body a valid one when the docstring was all of it
                node.body = body[1:] or [ast.Pass()]
    return tree


def code_digest(sources: Iterable[str]) -> str:
    """8 hex digits naming the code of ``sources`` (module texts, in order).

    Each text is parsed, its docstrings dropped and the rest written back out by
    :func:`ast.unparse`, so comments and layout do not count.
    """
    digest = hashlib.sha256()
    for source in sources:
        code = ast.unparse(_without_docstrings(ast.parse(source)))
        digest.update(code.encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()[:8]


def current_digest(root: Path | None = None) -> str:
    """The digest of :data:`MODULES` as they are now under ``root`` (the package by default)."""
    return code_digest(path.read_text(encoding="utf-8") for path in module_paths(root))
