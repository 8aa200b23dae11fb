"""``ground_integrations.core``: the framework-free core, under the name the docs use.

Everything here is also importable from ``ground_integrations`` itself.
"""

from . import *  # noqa: F403
from . import __all__ as _public

__all__ = list(_public)
