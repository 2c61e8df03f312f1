"""
ktir passes, one file per pass, registered lazily (as `xdsl.transforms` does).

`get_all_passes()` maps each pass name to a function that imports and returns the pass
class, so that `ktir-opt --help` does not import every pass.
"""

from collections.abc import Callable

from xdsl.passes import ModulePass


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Pass name -> import thunk for every ktir pass."""
    return {}
