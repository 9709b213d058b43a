"""What shape specialisation costs on a dynamic model: the import with `?` dimensions, one
`specialize-shapes`, the first call with new shapes (specialise + compile, a cold compile
cache), a repeated call with the same shapes, and the first call of a freshly compiled model
with shapes the (now warm) compile cache holds.

    python bench/specialization_cost.py [MODEL.onnx] [--shape NAME=DIMS ...]

The default model is the tiny BERT export `tests/models/bert_dynamic.onnx`, every input of
shape 2x8. The compile cache is a fresh temporary directory, so the cold figure is cold.
Medians of 5 specialisations and 20 repeated calls; single figures for the compiles.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def _inputs(model, shapes: dict[str, tuple[int, ...]]) -> list[np.ndarray]:
    """Arrays of the given shapes: ones for integer inputs (valid token ids, masks), random
    normals for float ones."""
    from onnx import TensorProto

    rng = np.random.default_rng(0)
    arrays = []
    for info in model.graph.input:
        shape = shapes[info.name]
        if info.type.tensor_type.elem_type == TensorProto.FLOAT:
            arrays.append(rng.standard_normal(shape).astype(np.float32))
        else:
            arrays.append(np.ones(shape, np.int64))
    return arrays


def measure(path: Path, shapes: dict[str, tuple[int, ...]]) -> dict[str, float]:
    import onnx

    from fusion_compiler.driver import compile_module
    from fusion_compiler.frontend.onnx_importer import import_model
    from fusion_compiler.passes.specialize_shapes import specialize_shapes

    model = onnx.load(str(path))
    start = time.perf_counter()
    module = import_model(model)
    result = {"import": time.perf_counter() - start}
    samples = []
    for _ in range(5):
        copy = module.clone()
        start = time.perf_counter()
        specialize_shapes(copy, shapes)
        samples.append(time.perf_counter() - start)
    result["specialize-shapes"] = statistics.median(samples)
    arrays = _inputs(model, shapes)
    compiled = compile_module(module)
    start = time.perf_counter()
    compiled.run("main", *arrays)
    result["first call (cold cache)"] = time.perf_counter() - start
    samples = []
    for _ in range(20):
        start = time.perf_counter()
        compiled.run("main", *arrays)
        samples.append(time.perf_counter() - start)
    result["repeated call"] = statistics.median(samples)
    fresh = compile_module(module)
    start = time.perf_counter()
    fresh.run("main", *arrays)
    result["first call (warm cache)"] = time.perf_counter() - start
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", nargs="?", default=ROOT / "tests/models/bert_dynamic.onnx")
    parser.add_argument("--shape", action="append", default=[], metavar="NAME=DIMS")
    args = parser.parse_args()
    import onnx

    names = [i.name for i in onnx.load(str(args.model)).graph.input]
    shapes = {name: (2, 8) for name in names}
    for entry in args.shape:
        name, dims = entry.split("=")
        shapes[name] = tuple(int(d) for d in dims.split("x"))
    with tempfile.TemporaryDirectory() as cache:
        os.environ["FUSION_CACHE_DIR"] = cache
        figures = measure(Path(args.model), shapes)
    print(f"{Path(args.model).name}, shapes {shapes}, load {os.getloadavg()[0]:.1f}:")
    for key, seconds in figures.items():
        print(f"  {key:24} {seconds * 1e3:10.2f} ms")


if __name__ == "__main__":
    main()
