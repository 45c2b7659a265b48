"""fusegrad.nn: layers, ``nn.optim`` (optimizers) and ``nn.state`` (state dicts, model files).

Layers: ``Linear, Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d, BatchNorm (BatchNorm2d),
GroupNorm, InstanceNorm, LayerNorm, LayerNorm2d, RMSNorm, Embedding, LSTMCell``.
``nn.datasets``: MNIST (local folder or fetched, checksummed) and scikit-learn's digits.
"""

from fusegrad.codegen import KernelInfo

# tinygrad's nn module also carries these names (its layers' imports); code reaches them there
from fusegrad.helpers import make_tuple
from fusegrad.nn import datasets, optim, state
from fusegrad.nn.layers import (
    Conv1d,
    Conv2d,
    ConvTranspose1d,
    ConvTranspose2d,
    Embedding,
    Linear,
    LSTMCell,
)
from fusegrad.nn.norm import (
    BatchNorm,
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    GroupNorm,
    InstanceNorm,
    LayerNorm,
    LayerNorm2d,
    RMSNorm,
)
from fusegrad.tensor import Tensor
from fusegrad.uop import AxisType, Ops, UOp, flatten, prod

__all__ = [
    "AxisType",
    "BatchNorm",
    "BatchNorm1d",
    "BatchNorm2d",
    "BatchNorm3d",
    "Conv1d",
    "Conv2d",
    "ConvTranspose1d",
    "ConvTranspose2d",
    "Embedding",
    "GroupNorm",
    "InstanceNorm",
    "KernelInfo",
    "LSTMCell",
    "LayerNorm",
    "LayerNorm2d",
    "Linear",
    "Ops",
    "RMSNorm",
    "Tensor",
    "UOp",
    "datasets",
    "flatten",
    "make_tuple",
    "optim",
    "prod",
    "state",
]
