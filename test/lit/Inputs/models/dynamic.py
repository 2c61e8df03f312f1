# A dynamic batch dimension: ktir needs static shapes.
import torch

model = torch.nn.Linear(64, 32)
example_args = (torch.randn(8, 64),)
dynamic_shapes = {"input": {0: torch.export.Dim("batch", min=2, max=64)}}
