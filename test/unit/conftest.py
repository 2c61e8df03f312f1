"""
pytest configuration. With pytest's default (prepend) import mode this directory is on
sys.path, so tests anywhere below import the shared `helpers` and `model_zoo` modules; test
folders have no `__init__.py`, so test module basenames are unique across the tree.
"""

from hypothesis import settings

# Property tests draw the same examples on every run and machine: a CI run is reproducible, and a
# rare example cannot fail one change's run and not another's. (`--hypothesis-seed` still explores.)
settings.register_profile("deterministic", derandomize=True)
settings.load_profile("deterministic")
