"""pytest configuration: this directory is on sys.path, so tests import `model_zoo`."""
