"""A Griffe extension: the docstrings' reStructuredText read as the Markdown mkdocstrings renders.

The package's docstrings are Google-style with Sphinx's inline roles (``:class:`Policy```,
``:meth:`~ground_integrations.GroundednessChecker.check```, ``:mod:`.citations```). The
API reference renders them with mkdocstrings, which reads Markdown: this extension rewrites
each role, once the package is loaded, so that

- a role naming an object of this package becomes an (optional) autorefs cross-reference: a
  link to the object's entry in the reference, or plain code for a helper the reference does
  not render;
- a role naming anything else (the standard library, LangChain, LlamaIndex) becomes code;
- a role that names nothing, in a docstring the reference renders (a public object, or one a
  package exports), is reported, which fails a strict build: a stale name cannot slip through.
  So is a role naming an object of this package that does not exist.

Names resolve as Sphinx resolves them: from the docstring's own scope outwards (a method, its
class, its module, what the module imports), ``~`` shows the last component only, and a leading
``.`` is relative to the module's package.

The few block constructs of reStructuredText the docstrings use become their Markdown
equivalents: ``.. code-block:: python`` and ``::`` literal blocks become fenced code, ``>>>``
sessions become ``pycon`` code, and simple tables (``=====  =====`` borders) become Markdown
tables. The docstrings themselves are left as they are: ``help()`` and IDEs show them as written.
"""

from __future__ import annotations

import html
import importlib.util
import re
from typing import Any

import griffe

ROLE = re.compile(
    r":(?:py:)?(?P<role>class|func|meth|attr|mod|data|obj|exc|const):`(?P<target>[^`]+)`"
)
ROOT = "ground_integrations"
logger = griffe.get_logger(__name__)


def _relative(obj: griffe.Object, target: str) -> str:
    """``.x.y`` / ``..x`` from the package of ``obj``'s module, as Python's relative imports."""
    dots = len(target) - len(target.lstrip("."))
    module = obj.module
    package = module if module.is_package else module.parent
    for _ in range(dots - 1):
        package = package.parent if package is not None and package.parent is not None else package
    rest = target[dots:]
    base = package.path if package is not None else ROOT
    return f"{base}.{rest}" if rest else base


def _resolve(obj: griffe.Object, target: str) -> str | None:
    """The full path ``target`` names from ``obj``'s docstring, or None."""
    if target.startswith("."):
        return _relative(obj, target)
    if target == ROOT or target.startswith(ROOT + "."):
        return target
    head, _, rest = target.partition(".")
    scope: griffe.Object | None = obj
    while scope is not None:
        if head in scope.members:
            member = scope.members[head]
            path = member.target_path if member.is_alias else member.path  # an import: its origin
            return f"{path}.{rest}" if rest else path
        scope = scope.parent
    try:
        path = obj.resolve(head)
    except (griffe.NameResolutionError, AttributeError, KeyError):
        return None
    return f"{path}.{rest}" if rest else path


def _find(collection: Any, path: str) -> str | None:
    """The canonical path of the object at ``path`` (where it is defined), or None."""
    try:
        found = collection.get_member(path)
    except (KeyError, ValueError, griffe.AliasResolutionError, griffe.CyclicAliasError):
        return None
    try:
        return str(found.canonical_path)
    except (griffe.AliasResolutionError, griffe.CyclicAliasError):
        return path


def _exports(module: griffe.Object) -> set[str]:
    names = module.exports if isinstance(module, griffe.Module) else None
    return set(names) if names is not None else {n for n in module.members if not n.startswith("_")}


def _documented(collection: Any, path: str) -> bool:
    """Whether the reference renders the object at ``path``: each step from the package down is
    public (a submodule without an underscore, a name in its module's ``__all__``, a class member
    without one), or the object sits in a private module and the package above exports it under
    its own name (``langchain._guard.GroundednessGuard`` is ``langchain.GroundednessGuard``)."""
    parts = path.split(".")
    for k in range(1, len(parts)):
        name = parts[k]
        try:
            parent = collection.get_member(".".join(parts[:k]))
            member = parent.members[name]
            is_module = not member.is_alias and member.is_module
        except (KeyError, ValueError, griffe.AliasResolutionError, griffe.CyclicAliasError):
            return False
        if is_module:
            below = parts[k + 1] if k + 1 < len(parts) else None
            if name.startswith("_") and (below is None or below not in _exports(parent)):
                return False
        elif isinstance(parent, griffe.Module):
            exported_above = parts[k - 1].startswith("_")  # checked at the step above
            if name not in _exports(parent) and not exported_above:
                return False
        elif name.startswith("_"):
            return False
    return True


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _block(lines: list[str], start: int, deeper_than: int) -> tuple[list[str], int]:
    """The indented block from ``start`` (blank lines inside it kept, trailing ones dropped)."""
    end = start
    while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > deeper_than):
        end += 1
    body = lines[start:end]
    while body and not body[-1].strip():
        body.pop()
        end -= 1 if end > start and not lines[end - 1].strip() else 0
    return body, start + len(body)


def _fence(body: list[str], pad: str, lang: str) -> list[str]:
    while body and not body[0].strip():
        body = body[1:]
    cut = min((_indent(x) for x in body if x.strip()), default=0)
    return [f"{pad}```{lang}", *(pad + x[cut:] if x.strip() else "" for x in body), f"{pad}```"]


TABLE_BORDER = re.compile(r"^\s*=+(?: +=+)+\s*$")


def _table(lines: list[str], start: int) -> tuple[list[str], int] | None:
    """A simple table (border, header, border, rows, border) as a Markdown table."""
    border = lines[start]
    pad = border[: _indent(border)]
    spans = [(m.start(), m.end()) for m in re.finditer(r"=+", border)]
    borders = [start]
    i = start + 1
    while i < len(lines) and lines[i].strip() and len(borders) < 3:
        if set(lines[i].strip()) <= {"=", " "}:
            borders.append(i)
        i += 1
    if len(borders) == 2:  # no header row: border, rows, border
        borders.insert(0, start - 1)
    if len(borders) < 3:
        return None

    def cells(line: str) -> list[str]:
        out = []
        for n, (a, _) in enumerate(spans):
            b = spans[n + 1][0] if n + 1 < len(spans) else len(line)
            out.append(line[a:b].strip())
        return out

    header = [cells(lines[k]) for k in range(borders[0] + 1, borders[1]) if k > start]
    rows: list[list[str]] = []
    for k in range(borders[1] + 1, borders[2]):
        row = cells(lines[k])
        if rows and not row[0]:  # a continuation line: it adds to the row above
            rows[-1] = [f"{a} {b}".strip() for a, b in zip(rows[-1], row)]
        else:
            rows.append(row)
    head = header[0] if header else [""] * len(spans)
    out = [pad + "| " + " | ".join(head) + " |", pad + "|" + "---|" * len(spans)]
    out += [pad + "| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
    return out, borders[2] + 1


def rst_blocks(text: str) -> str:
    """Code blocks, literal blocks, doctest sessions and simple tables, as Markdown."""
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    fenced = False
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if stripped.startswith("```"):
            fenced = not fenced
        if fenced:
            out.append(line)
            i += 1
            continue
        pad = line[: _indent(line)]
        directive = re.match(r"\.\. (?:code-block|code|sourcecode)::\s*(\w*)\s*$", stripped)
        if directive or (stripped.endswith("::") and not stripped.startswith("..")):
            if directive:
                lang = directive[1] or "text"
            else:
                lang = "text"
                if stripped != "::":
                    out.append(line[:-1])  # "Like this::" reads "Like this:"
            body, i = _block(lines, i + 1, _indent(line))
            out.extend(_fence(body, pad, lang) if any(x.strip() for x in body) else [])
            continue
        if stripped.startswith(">>> "):
            end = i
            while end < len(lines) and lines[end].strip():
                end += 1
            out.extend(_fence(lines[i:end], pad, "pycon"))
            i = end
            continue
        if TABLE_BORDER.match(line):
            table = _table(lines, i)
            if table is not None:
                out.extend(table[0])
                i = table[1]
                continue
        out.append(line)
        i += 1
    return "\n".join(out)


class SphinxRoles(griffe.Extension):
    """Rewrite ``:role:`target``` in every docstring of the package (see the module docstring)."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        if pkg.path != ROOT:
            return
        seen: set[str] = set()
        self._walk(pkg, loader, seen)

    def _walk(self, obj: griffe.Object, loader: griffe.GriffeLoader, seen: set[str]) -> None:
        if obj.path in seen:
            return
        seen.add(obj.path)
        if obj.docstring is not None:
            text = ROLE.sub(lambda m: self._link(obj, m, loader), obj.docstring.value)
            obj.docstring.value = rst_blocks(text)
        for member in obj.members.values():
            if not member.is_alias:
                self._walk(member, loader, seen)  # type: ignore[arg-type]

    def _link(self, obj: griffe.Object, match: re.Match[str], loader: griffe.GriffeLoader) -> str:
        written = re.sub(r"\s+", "", match["target"])
        short = written.startswith("~")
        target = written.lstrip("~")
        shown = target.rsplit(".", 1)[-1] if short else target.lstrip(".")
        path = _resolve(obj, target)
        if path is None and importlib.util.find_spec(target.split(".")[0]) is not None:
            path = target  # a module of the standard library or another package
        rendered = _documented(loader.modules_collection, obj.path)
        if path is None:
            if rendered:
                logger.warning("%s: %s names nothing that can be found", obj.path, match[0])
            return f"`{shown}`"
        if path == ROOT or path.startswith(ROOT + "."):
            found = _find(loader.modules_collection, path)
            if found is None:
                if rendered:
                    logger.warning("%s: %s names %s: no such object", obj.path, match[0], path)
                return f"`{shown}`"
            # an optional cross-reference: a link where the reference has an entry for the
            # object, plain code (no warning) for a helper it does not render
            code = f"<code>{html.escape(shown)}</code>"
            return f'<autoref identifier="{found}" optional>{code}</autoref>'
        return f"`{shown}`"  # the standard library or another package: code, not a link
