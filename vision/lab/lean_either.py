"""Two lean checks as one: a die leans when either of them says so.

Usage::

    python -m vision.lab.lean_either FIRST.onnx SECOND.onnx --out lean_net.onnx

The lean check trained on plain rendered trays and the one trained with the bar's variety
as well (`lean_net_train --varied`) each let through leaning dice the other stops: the
varied one unlearnt part of the plain trays, the plain one never saw a die lean on the
tray's wall (docs/lab/vision-finder.md). Asking both costs a second pass of a network of
32x32 pixels. The result is one ONNX file with the interface of each (input ``patch``,
output ``logits`` of flat and leaning), so `vision.lean_net.LeanNet` reads it unchanged: its
leaning logit is the larger of the two checks' (leaning minus flat) margins, its flat logit
0, which makes its probability of leaning the larger of theirs.

Needs the ``onnx`` package (the training extra); the product reads the result through
OpenCV alone.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

INPUT, OUTPUT = "patch", "logits"


def _prefixed(model, prefix: str, output: str = OUTPUT):
    """(nodes, initializers, name of ``output``) of ``model``'s graph with every internal name
    prefixed, its input left shared."""
    import onnx

    graph = model.graph
    renamed = {t.name: prefix + t.name for t in graph.initializer}
    for node in graph.node:
        renamed.update((o, prefix + o) for o in node.output)
    nodes = []
    for k, node in enumerate(graph.node):
        copy = onnx.NodeProto()
        copy.CopyFrom(node)
        copy.name = prefix + (node.name or f"node{k}")  # OpenCV wants every name different
        del copy.input[:]
        copy.input.extend(renamed.get(i, i) for i in node.input)
        del copy.output[:]
        copy.output.extend(renamed[o] for o in node.output)
        nodes.append(copy)
    initializers = []
    for tensor in graph.initializer:
        copy = onnx.TensorProto()
        copy.CopyFrom(tensor)
        copy.name = renamed[tensor.name]
        initializers.append(copy)
    return nodes, initializers, renamed[output]


def either(first: Path, second: Path, out: Path) -> None:
    """Write to ``out`` one network that says "leaning" when ``first`` or ``second`` does."""
    import onnx
    from onnx import helper, numpy_helper

    models = []
    for path in (first, second):
        try:
            models.append(onnx.load(str(path)))
        except OSError:
            raise
        except Exception as exc:  # protobuf's DecodeError: not an ONNX file
            raise ValueError(f"{path} is not an ONNX file ({exc})") from exc
    for path, model in zip((first, second), models, strict=True):
        if [i.name for i in model.graph.input] != [INPUT] or \
                [o.name for o in model.graph.output] != [OUTPUT]:
            raise ValueError(f"{path} is no lean check (input {INPUT!r}, output {OUTPUT!r})")
    a_nodes, a_init, a_out = _prefixed(models[0], "first_")
    b_nodes, b_init, b_out = _prefixed(models[1], "second_")
    # (flat, leaning) x (-1, 1): the leaning margin, one column. The names added here start
    # with "either_", which no prefixed name does: a combined check can be combined again.
    margin = numpy_helper.from_array(np.array([[-1.0], [1.0]], np.float32), "either_w")
    steps = (("MatMul", [a_out, "either_w"], "either_first"),
             ("MatMul", [b_out, "either_w"], "either_second"),
             ("Max", ["either_first", "either_second"], "either_larger"),
             ("Sub", ["either_larger", "either_larger"], "either_flat"))
    nodes = [*a_nodes, *b_nodes,
             *(helper.make_node(op, inputs, [name], name=name) for op, inputs, name in steps),
             helper.make_node("Concat", ["either_flat", "either_larger"], [OUTPUT], axis=1,
                              name="either_logits")]
    graph = helper.make_graph(nodes, "lean_either", list(models[0].graph.input),
                              list(models[0].graph.output), [*a_init, *b_init, margin])
    combined = helper.make_model(graph, opset_imports=models[0].opset_import)
    onnx.checker.check_model(combined)
    out.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(combined, str(out))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vision.lab.lean_either",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("first", type=Path)
    parser.add_argument("second", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    try:
        either(args.first, args.second, args.out)
    except (OSError, ValueError) as exc:
        print(f"lean_either: {exc}", file=sys.stderr)
        return 2
    except ImportError:
        print("lean_either: needs the onnx package (pip install -e '.[train]')", file=sys.stderr)
        return 2
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
