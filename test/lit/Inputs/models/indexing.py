# Data-dependent ops that run on the chip: embedding, index and cumsum.
import torch


def model(ids: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
    positions = torch.cumsum(torch.ones_like(ids), dim=1)
    rows = torch.nn.functional.embedding(ids, table)
    return rows * torch.sin(positions.float()).unsqueeze(-1) + table[ids[0, :2]].sum(0)


example_args = (torch.tensor([[3, 1, 2, 0]]), torch.randn(8, 64))
