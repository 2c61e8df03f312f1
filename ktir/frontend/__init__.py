"""Frontends: PyTorch FX (`ktir.frontend.fx`) to graph-level ktir."""
