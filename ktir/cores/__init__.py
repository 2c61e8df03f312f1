"""
Work over cores: iteration spaces, tiling, work division, kernels, LX chunking and address
planning, the static core check, and the functional executor of core-level IR.
"""
