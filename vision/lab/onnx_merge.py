"""What the scripts that merge ONNX networks into one file share (`lean_either`, `face_mean`):
loading them, a graph's nodes renamed so that two graphs can live side by side, and the
command line.

The product runs the merged files on ONNX Runtime (`vision.onnx_model`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

INPUT, OUTPUT = "patch", "logits"  # the interface of every network the product reads


def load(paths: Sequence[Path], what: str) -> list:
    """The ONNX models in ``paths``, each with the product's interface (input ``patch``, output
    ``logits``); OSError for a missing file, ValueError for one that is not such a ``what``."""
    import onnx

    models = []
    for path in paths:
        try:
            model = onnx.load(str(path))
        except OSError:
            raise
        except Exception as exc:  # protobuf's DecodeError: not an ONNX file
            raise ValueError(f"{path} is not an ONNX file ({exc})") from exc
        if [i.name for i in model.graph.input] != [INPUT] or \
                [o.name for o in model.graph.output] != [OUTPUT]:
            raise ValueError(f"{path} is no {what} (input {INPUT!r}, output {OUTPUT!r})")
        models.append(model)
    return models


def prefixed(model, prefix: str, output: str = OUTPUT):
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
        copy.name = prefix + (node.name or f"node{k}")  # a name of its own for every node
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


def save(graph, like, out: Path) -> None:
    """``graph`` as a model of ``like``'s opsets, checked, written to ``out``."""
    import onnx
    from onnx import helper

    model = helper.make_model(graph, opset_imports=like.opset_import)
    onnx.checker.check_model(model)
    out.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(out))


def command(name: str, description: str, merge: Callable[[list[Path], Path], None],
            argv: Sequence[str] | None, most: int | None = None) -> int:
    """The command line of a merging script ``name``: two networks or more (at most ``most``)
    and ``--out``; errors in one line, exit status 2."""
    parser = argparse.ArgumentParser(prog=f"python -m vision.lab.{name}",
                                     description=description)
    parser.add_argument("networks", type=Path, nargs="+")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if len(args.networks) < 2 or (most is not None and len(args.networks) > most):
        parser.error("two networks" + (" at least" if most is None else ""))
    try:
        merge(args.networks, args.out)
    except (OSError, ValueError) as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {args.out}")
    return 0
