"""
pytest configuration. With pytest's default (prepend) import mode this directory is on
sys.path, so tests anywhere below import the shared `helpers` and `model_zoo` modules; test
folders have no `__init__.py`, so test module basenames are unique across the tree.
"""

import pytest
from hypothesis import settings

# Property tests draw the same examples on every run and machine: a CI run is reproducible, and a
# rare example cannot fail one change's run and not another's. (`--hypothesis-seed` still explores.)
settings.register_profile("deterministic", derandomize=True)
settings.load_profile("deterministic")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """
    Run the longest tests first. On two workers a test of minutes started last keeps one core
    busy while the other idles (longest-processing-time-first scheduling); started first, the
    short tests fill in around it. Tests marked `slow(minutes=True)` come first, then the other
    `slow` ones, then the rest, each group in its collected order (`sort` is stable).
    """
    items.sort(key=_length_rank)


def _length_rank(item: pytest.Item) -> int:
    """0 for a test of minutes, 1 for another slow test, 2 for the rest."""
    slow = item.get_closest_marker("slow")
    if slow is None:
        return 2
    return 0 if slow.kwargs.get("minutes") else 1
