"""The face network tuned to one bar's dice: every weight of it moved a little, on the CPU.

Refitting the network's last layer alone on a bar's dice changes nothing it reads (the
features it sees of a dark die are already those of a blank, `docs/lab/vision-tried-and-
dropped.md`); tuning the whole network does. The shipped ONNX model is rebuilt as a PyTorch
module with the same weights (`OnnxModule`), tuned for ``STEPS`` steps on the patches of the
bar's dice with their values, and its weights written back into a copy of the same graph:
same layers, same size, same speed, read by ONNX Runtime as the shipped one is.

What keeps a few dozen dice from making it forget the rest: the loss is the patches'
cross-entropy (each class weighing alike) plus ``KEEP`` times the distance of its beliefs from
the shipped network's on the same patches (distillation: what the dice shown do not teach
stays as it was) plus ``PULL`` times the squared distance of its weights from the shipped
ones. Seeded and on one thread: the same patches give the same network.

PyTorch is the ``learn`` extra (``pip install 'dicetower[learn]'``): a tower that reads
needs only ONNX Runtime; `available` says whether this one can tune.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np

#: Gradient steps, patches per step and Adam's rate: a few thousand patch views seen two or
#: three times each, about 13 s on one core for the whole network.
STEPS = 150
BATCH = 64
RATE = 6e-4
#: Weight of the distance to the shipped network's beliefs (KL divergence): without it the
#: values no patch showed are forgotten (ones read as blanks after learning fours).
KEEP = 0.3
#: Weight of the squared distance to the shipped weights (summed over every weight).
PULL = 0.01
#: The layers tuned: the convolution and fully connected layers this deep and deeper (the
#: face network's members have four convolutions, then two fully connected layers): all of
#: them. Tuned from the last convolution on (4), a tuning takes a third of the time and
#: gains half as much (docs/lab/calibration-tuning.md).
TUNED_FROM = 1


def available() -> bool:
    """Whether PyTorch is installed here, so that the face network can be tuned."""
    return importlib.util.find_spec("torch") is not None


def tune(model: Any, inputs: np.ndarray, labels: np.ndarray, *, steps: int = STEPS,
         tuned_from: int | None = None, seed: int = 0) -> Any:
    """A copy of the face network ``model`` (an ``onnx.ModelProto``) tuned on ``inputs``
    (N, 3, side, side float32, as `vision.face_net.to_input` makes them) of ``labels`` (N,
    class indices): the same graph with new weights, those of its layers ``tuned_from`` deep
    and deeper (1: every layer; None: TUNED_FROM)."""
    import onnx
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        torch.manual_seed(seed)
        net = OnnxModule(model, TUNED_FROM if tuned_from is None else tuned_from)
        start = {name: p.detach().clone() for name, p in net.weights.items()}
        with torch.no_grad():  # what the layers kept as they are make of every patch, once
            fixed = net.fixed(torch.from_numpy(np.ascontiguousarray(inputs, np.float32)))
            shipped = torch.log_softmax(net(fixed), dim=1)
        y = torch.from_numpy(np.asarray(labels, np.int64))
        counts = torch.bincount(y, minlength=shipped.shape[1]).float()
        balance = 1.0 / counts.clamp(min=1)  # each class alike (nll_loss normalises weights)
        optimiser = torch.optim.Adam(net.parameters(), lr=RATE)
        picks = torch.Generator().manual_seed(seed)
        for _ in range(steps):
            batch = torch.randint(len(y), (min(BATCH, len(y)),), generator=picks)
            logits = torch.log_softmax(net({k: v[batch] for k, v in fixed.items()}), dim=1)
            learn = torch.nn.functional.nll_loss(logits, y[batch], weight=balance)
            keep = torch.nn.functional.kl_div(logits, shipped[batch], log_target=True,
                                              reduction="batchmean")
            pull = sum(((p - start[name]) ** 2).sum() for name, p in net.weights.items())
            loss = learn + KEEP * keep + PULL * pull
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
    finally:
        torch.set_num_threads(threads)
    tuned = onnx.ModelProto()
    tuned.CopyFrom(model)
    values = {name: p.detach().numpy() for name, p in net.weights.items()}
    for k, tensor in enumerate(tuned.graph.initializer):
        if tensor.name in values:
            tuned.graph.initializer[k].CopyFrom(onnx.numpy_helper.from_array(
                values[tensor.name].astype(np.float32), tensor.name))
    return tuned


def OnnxModule(model: Any, tuned_from: int = 1) -> Any:
    """The ONNX ``model`` as a PyTorch module of the same weights: those of its layers (Conv,
    Gemm) ``tuned_from`` deep and deeper are parameters (``module.weights``, by initializer
    name), the others constants. ``module.fixed(x)`` computes what depends on constants
    alone (the tensors the tuned layers read), ``module(fixed)`` the rest; ``module(x)``
    both. Written here rather than taken from a converter: the face network uses six
    operators, and keeping each weight under its initializer's name is what lets the tuned
    weights go back into the same graph. ValueError on another operator."""
    import torch
    from onnx import helper, numpy_helper

    graph = model.graph
    stored = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    nodes, depth = [], {graph.input[0].name: 0}
    for node in graph.node:
        if node.op_type not in _OPS:
            raise ValueError(f"the face network uses {node.op_type}, which calibration "
                             "cannot tune")
        deep = max((depth.get(i, 0) for i in node.input), default=0)
        deep += node.op_type in ("Conv", "Gemm")
        depth[node.output[0]] = deep
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        nodes.append((node.op_type, list(node.input), node.output[0], attrs, deep))
    tuned = {i for op, inputs, _, _, deep in nodes if deep >= tuned_from
             and op in ("Conv", "Gemm") for i in inputs[1:] if i in stored}

    class Module(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.params = torch.nn.ParameterList()
            self.weights: dict[str, torch.nn.Parameter] = {}
            self.constants: dict[str, torch.Tensor] = {}
            for name, value in stored.items():
                tensor = torch.from_numpy(value.astype(np.float32))
                if name in tuned:
                    self.weights[name] = torch.nn.Parameter(tensor)
                    self.params.append(self.weights[name])
                else:
                    self.constants[name] = tensor
            # A node is fixed when nothing it reads comes from a tuned weight.
            moving = set(tuned)
            self.late = []
            for op, inputs, output, attrs, _ in nodes:
                if moving & set(inputs):
                    moving.add(output)
                    self.late.append((op, inputs, output, attrs))
            self.early = [(op, i, o, a) for op, i, o, a, _ in nodes if o not in moving]
            read = {i for _, inputs, _, _ in self.late for i in inputs}
            self.frontier = sorted(read - moving - set(stored))
            self.input, self.output = graph.input[0].name, graph.output[0].name

        def fixed(self, x: torch.Tensor, chunk: int = 256) -> dict[str, torch.Tensor]:
            parts = [self._run(self.early, {self.input: x[k:k + chunk]})
                     for k in range(0, len(x), chunk)]
            return {name: torch.cat([p[name] for p in parts]) for name in self.frontier}

        def forward(self, x: torch.Tensor | dict[str, torch.Tensor]) -> torch.Tensor:
            given = self.fixed(x) if isinstance(x, torch.Tensor) else x
            return self._run(self.late, dict(given))[self.output]

        def _run(self, steps: list[Any], values: dict[str, Any]) -> dict[str, Any]:
            values.update(self.constants)
            values.update(self.weights)
            for op, inputs, output, attrs in steps:
                values[output] = _OPS[op]([values[i] for i in inputs if i], attrs)
            return values

    return Module()


def _conv(args: list[Any], a: dict[str, Any]) -> Any:
    import torch

    pads = a.get("pads", [0, 0, 0, 0])
    if pads[: len(pads) // 2] != pads[len(pads) // 2:]:
        raise ValueError("the face network pads a convolution unevenly")
    return torch.nn.functional.conv2d(args[0], args[1], args[2] if len(args) > 2 else None,
                                      stride=a.get("strides", 1), padding=pads[:2],
                                      dilation=a.get("dilations", 1), groups=a.get("group", 1))


def _max_pool(args: list[Any], a: dict[str, Any]) -> Any:
    import torch

    if any(a.get("pads", [0])) or a.get("ceil_mode", 0):
        raise ValueError("the face network pools with padding")
    return torch.nn.functional.max_pool2d(args[0], a["kernel_shape"],
                                          stride=a.get("strides", a["kernel_shape"]),
                                          dilation=a.get("dilations", 1))


def _gemm(args: list[Any], a: dict[str, Any]) -> Any:
    x = args[0].T if a.get("transA", 0) else args[0]
    w = args[1].T if a.get("transB", 0) else args[1]
    out = a.get("alpha", 1.0) * (x @ w)
    return out + a.get("beta", 1.0) * args[2] if len(args) > 2 else out


def _relu(args: list[Any], a: dict[str, Any]) -> Any:
    return args[0].clamp(min=0)


def _flatten(args: list[Any], a: dict[str, Any]) -> Any:
    return args[0].flatten(a.get("axis", 1))


def _concat(args: list[Any], a: dict[str, Any]) -> Any:
    import torch

    return torch.cat(args, dim=a["axis"])


_OPS = {"Conv": _conv, "MaxPool": _max_pool, "Gemm": _gemm, "Relu": _relu,
        "Flatten": _flatten, "Concat": _concat}
