"""The installed package's version, in one place (read by the package and by telemetry)."""

from importlib.metadata import PackageNotFoundError, version

__all__ = ["__version__"]

try:
    __version__ = version("ground-integrations")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0"
