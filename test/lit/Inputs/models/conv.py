# A patch embedding, a 3x3 convolution with batch norm, a depthwise convolution and pooling.
import torch


class ConvNet(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.patch = torch.nn.Conv2d(3, 16, 4, stride=4)
        self.conv = torch.nn.Conv2d(16, 16, 3, padding=1, bias=False)
        self.norm = torch.nn.BatchNorm2d(16)
        self.depthwise = torch.nn.Conv2d(16, 16, 3, padding=1, groups=16)
        self.pool = torch.nn.MaxPool2d(2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.patch(x)
        h = torch.relu(self.norm(self.conv(h)))
        return self.pool(self.depthwise(h))


torch.manual_seed(0)
model = ConvNet().eval().half()
example_args = (torch.randn(1, 3, 16, 16).half(),)
