"""Where this package's own data files are: a plain folder when it is installed as files.

`importlib.resources` gives the same folder (a `pathlib.Path`) for such an install, but importing it costs every
process a few milliseconds (its zip, temporary-file and archive support); it is imported only for an install that
is not a folder on disk (a zip archive), where its view is the only way in.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

__all__ = ["spec_root"]

_HERE = Path(__file__).parent


def spec_root() -> Traversable:
    """The folder of `sessionspec.spec` (its JSON files, its revisions), read as files when it is one."""
    if os.path.isfile(_HERE / "constants.json"):
        return _HERE
    from importlib import resources

    return resources.files("sessionspec.spec")
