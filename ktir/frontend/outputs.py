"""
The structure of a model's outputs, kept across import so a compiled program returns what the
model returns.

A model may return a tensor, tuples, lists, dicts, dataclasses, Hugging Face `ModelOutput`s
(registered pytree nodes) and constants (`None`, numbers), nested. `torch.export` needs every
container to be a registered pytree node, which plain dataclasses are not, so the importer
exports a wrapper that returns only the tensor leaves, in order, and records an `OutputTree`
that puts them back:

```python
leaves, tree = flatten_output({"y": y, "aux": (z, None)})   # leaves == [y, z]
assert unflatten_output(tree, leaves) == {"y": y, "aux": (z, None)}
```

Each tensor leaf becomes an `OutputSlot`: a result of the imported function, or a tensor with no
elements, which needs no kernel and is created on the host. Slots remember the leaf's shape and
dtype, so a 0-d tensor comes back 0-d and bf16 comes back bf16.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import ConstantArgument, OutputKind
from torch.utils import _pytree as pytree


@dataclass(frozen=True)
class OutputSlot:
    """One tensor leaf of the outputs: function result `result`, or (None) an empty host tensor."""

    shape: tuple[int, ...]
    dtype: torch.dtype
    result: int | None

    def value(self, results: Sequence[np.ndarray]) -> torch.Tensor:
        """The leaf as a torch tensor of the recorded shape and dtype, from the program's results."""
        if self.result is None:
            return torch.empty(self.shape, dtype=self.dtype)
        array = np.ascontiguousarray(results[self.result])
        return torch.from_numpy(array).reshape(self.shape).to(self.dtype)


@dataclass(frozen=True)
class _Tensor:
    """A tensor leaf (the next one in order)."""


@dataclass(frozen=True)
class _Constant:
    """A non-tensor leaf (None, a number, a string), returned as it was."""

    value: Any


@dataclass(frozen=True)
class _Dataclass:
    """An unregistered dataclass: rebuilt as `kind(**fields)` from its flattened init fields."""

    kind: type
    fields: OutputTree


@dataclass(frozen=True)
class OutputTree:
    """A pytree spec whose leaves are tensors, constants or (recursively) plain dataclasses."""

    spec: pytree.TreeSpec
    leaves: tuple[_Tensor | _Constant | _Dataclass, ...]

    @property
    def tensor_count(self) -> int:
        """How many tensor leaves the structure holds."""
        count = sum(isinstance(leaf, _Tensor) for leaf in self.leaves)
        return count + sum(leaf.fields.tensor_count for leaf in self.leaves if isinstance(leaf, _Dataclass))


def _is_plain_dataclass(value: Any) -> bool:
    """A dataclass instance torch's pytree does not know (ModelOutput is registered, so not this)."""
    return (
        dataclasses.is_dataclass(value)
        and not isinstance(value, type)
        and type(value) not in pytree.SUPPORTED_NODES
    )


def flatten_output(value: Any) -> tuple[list[torch.Tensor], OutputTree]:
    """The tensor leaves of `value` in order, and the tree that rebuilds it from them."""
    leaves, spec = pytree.tree_flatten(value, is_leaf=_is_plain_dataclass)
    tensors: list[torch.Tensor] = []
    kinds: list[_Tensor | _Constant | _Dataclass] = []
    for leaf in leaves:
        if isinstance(leaf, torch.Tensor):
            tensors.append(leaf)
            kinds.append(_Tensor())
        elif _is_plain_dataclass(leaf):
            init = {f.name: getattr(leaf, f.name) for f in dataclasses.fields(leaf) if f.init}
            inner, fields = flatten_output(init)
            tensors.extend(inner)
            kinds.append(_Dataclass(type(leaf), fields))
        else:
            kinds.append(_Constant(leaf))
    return tensors, OutputTree(spec, tuple(kinds))


def unflatten_output(tree: OutputTree, tensors: Sequence[torch.Tensor]) -> Any:
    """Rebuild the structure `tree` describes with `tensors` as its tensor leaves, in order."""
    if len(tensors) != tree.tensor_count:
        raise ValueError(f"the outputs hold {tree.tensor_count} tensor(s), got {len(tensors)}")
    return _rebuild(tree, iter(tensors))


def _rebuild(tree: OutputTree, tensors: Iterator[torch.Tensor]) -> Any:
    leaves = []
    for leaf in tree.leaves:
        if isinstance(leaf, _Tensor):
            leaves.append(next(tensors))
        elif isinstance(leaf, _Dataclass):
            leaves.append(leaf.kind(**_rebuild(leaf.fields, tensors)))
        else:
            leaves.append(leaf.value)
    return pytree.tree_unflatten(leaves, tree.spec)


def exported_tree(program: ExportedProgram) -> OutputTree:
    """The output structure an `ExportedProgram` records: its out spec, constants kept as leaves."""
    leaves: list[_Tensor | _Constant | _Dataclass] = []
    for spec in program.graph_signature.output_specs:
        if spec.kind != OutputKind.USER_OUTPUT:
            continue
        if isinstance(spec.arg, ConstantArgument):
            leaves.append(_Constant(spec.arg.value))
        else:
            leaves.append(_Tensor())
    out_spec = program.call_spec.out_spec
    if out_spec is None or out_spec.num_leaves != len(leaves):
        out_spec = pytree.tree_flatten(tuple(leaves))[1]
    return OutputTree(out_spec, tuple(leaves))


__all__ = ["OutputSlot", "OutputTree", "exported_tree", "flatten_output", "unflatten_output"]
