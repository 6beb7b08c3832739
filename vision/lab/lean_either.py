"""Two lean checks as one: a die leans when either of them says so.

Usage::

    python -m vision.lab.lean_either FIRST.onnx SECOND.onnx --out lean_net.onnx

The lean check trained on plain rendered trays and the one trained with the bar's variety
as well (`lean_net_train --varied`) each let through leaning dice the other stops: the
varied one unlearnt part of the plain trays, the plain one never saw a die lean on the
tray's wall (docs/lab/vision-finder.md). FIRST must be the one that never saw a die lean on
the wall: `vision.lean_net.LeanNet` asks it only about dice with something beside them to
lean on, from the two margins this file keeps under the names `vision.lean_net.EITHER_MARGINS`.
Asking both costs a second pass of a network of 32x32 pixels. The result is one ONNX file
with the interface of each (input ``patch``, output ``logits`` of flat and leaning): its
leaning logit is the larger of the two checks' (leaning minus flat) margins, its flat logit
0, which makes its probability of leaning the larger of theirs.

The product runs the result on ONNX Runtime (`vision.onnx_model`).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from vision.lab.onnx_merge import OUTPUT, command, load, prefixed, save
from vision.lean_net import EITHER_MARGINS


def either(first: Path, second: Path, out: Path) -> None:
    """Write to ``out`` one network that says "leaning" when ``first`` or ``second`` does."""
    from onnx import helper, numpy_helper

    models = load([first, second], "lean check")
    a_nodes, a_init, a_out = prefixed(models[0], "first_")
    b_nodes, b_init, b_out = prefixed(models[1], "second_")
    # (flat, leaning) x (-1, 1): the leaning margin, one column. The names added here start
    # with "either_", which no prefixed name does: a combined check can be combined again.
    margin = numpy_helper.from_array(np.array([[-1.0], [1.0]], np.float32), "either_w")
    first, second = EITHER_MARGINS
    steps = (("MatMul", [a_out, "either_w"], first),
             ("MatMul", [b_out, "either_w"], second),
             ("Max", [first, second], "either_larger"),
             ("Sub", ["either_larger", "either_larger"], "either_flat"))
    nodes = [*a_nodes, *b_nodes,
             *(helper.make_node(op, inputs, [name], name=name) for op, inputs, name in steps),
             helper.make_node("Concat", ["either_flat", "either_larger"], [OUTPUT], axis=1,
                              name="either_logits")]
    graph = helper.make_graph(nodes, "lean_either", list(models[0].graph.input),
                              list(models[0].graph.output), [*a_init, *b_init, margin])
    save(graph, models[0], out)


def main(argv: list[str] | None = None) -> int:
    return command("lean_either", __doc__.split("\n\n")[0],
                   lambda paths, out: either(paths[0], paths[1], out), argv, most=2)


if __name__ == "__main__":
    sys.exit(main())
