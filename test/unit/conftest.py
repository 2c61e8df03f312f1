"""
pytest configuration. With pytest's default (prepend) import mode this directory is on
sys.path, so tests anywhere below import the shared `helpers` and `model_zoo` modules; test
folders have no `__init__.py`, so test module basenames are unique across the tree.
"""
