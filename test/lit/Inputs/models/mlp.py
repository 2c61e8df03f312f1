# A two-layer MLP in fp16 for `ktir-import` lit tests.
import torch


class MLP(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(64, 128)
        self.fc2 = torch.nn.Linear(128, 32, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.nn.functional.gelu(self.fc1(x), approximate="tanh")
        return torch.softmax(self.fc2(h), dim=-1)


torch.manual_seed(0)
model = MLP().half()
example_args = (torch.randn(8, 64).half(),)
