"""``ground_integrations.core``: the framework-free core, under the name the docs use.

Everything here is also importable from ``ground_integrations`` itself.
"""

from . import __all__ as _public
from . import *  # noqa: F403

__all__ = list(_public)
