"""Face networks as one: the mean of their logits, with one last layer.

Usage::

    python -m vision.lab.face_mean FIRST.onnx SECOND.onnx [MORE.onnx ...] --out face_net.onnx

Two face networks trained alike but for a few samples and the seed disagree on what neither
learnt well: one is unsure of a polka cloth's dots, the other of a page of small print
(docs/lab/vision-face-training.md). Their mean is sure only where both are. The result is one
ONNX file with the interface of each (input ``patch``, output ``logits``), so
`vision.face_net.FaceNet` reads it unchanged, and one last fully connected layer, so a
profile's adaptation (`vision.adaptation`) refits it as it refits one network's: each
network's features (the input of its last layer) are put side by side, and the last layer's
weights are the networks' own, each divided by their number, its biases their mean. The
logits are then exactly the mean of the networks' logits.

The product runs the result on ONNX Runtime (`vision.onnx_model`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from vision.face_net import last_layer
from vision.lab.onnx_merge import OUTPUT, command, load, prefixed, save


def mean(paths: Sequence[Path], out: Path) -> None:
    """Write to ``out`` one network whose logits are the mean of the networks' in ``paths``."""
    import onnx
    from onnx import helper, numpy_helper

    models = load(paths, "face network")
    nodes, initializers, features, weights, biases = [], [], [], [], []
    for k, (path, model) in enumerate(zip(paths, models, strict=True)):
        last = last_layer(model, path)
        body = onnx.ModelProto()
        body.CopyFrom(model)
        del body.graph.node[list(model.graph.node).index(last.node)]  # one for all, below
        del body.graph.initializer[:]
        body.graph.initializer.extend(t for t in model.graph.initializer
                                      if t.name not in last.node.input[1:])
        own, tensors, feature = prefixed(body, f"net{k}_", last.features)
        nodes += own
        initializers += tensors
        features.append(feature)
        # The stored float32 values (the layers are exported with alpha and beta 1), so the
        # sums below are those of the networks' own numbers.
        weights.append(last.weights.astype(np.float32))
        biases.append(last.biases.astype(np.float32))
    if len({w.shape[0] for w in weights}) != 1:
        raise ValueError("the networks do not have the same classes")
    n = len(models)
    joined = numpy_helper.from_array(np.concatenate(weights, axis=1).astype(np.float32) / n,
                                     "mean_weights")
    bias = numpy_helper.from_array((np.sum(biases, axis=0) / n).astype(np.float32),
                                   "mean_biases")
    nodes.append(helper.make_node("Concat", features, ["mean_features"], axis=1,
                                  name="mean_features"))
    nodes.append(helper.make_node("Gemm", ["mean_features", "mean_weights", "mean_biases"],
                                  [OUTPUT], alpha=1.0, beta=1.0, transB=1, name="mean_logits"))
    graph = helper.make_graph(nodes, "face_mean", list(models[0].graph.input),
                              list(models[0].graph.output), [*initializers, joined, bias])
    save(graph, models[0], out)


def main(argv: list[str] | None = None) -> int:
    return command("face_mean", __doc__.split("\n\n")[0], mean, argv)


if __name__ == "__main__":
    sys.exit(main())
