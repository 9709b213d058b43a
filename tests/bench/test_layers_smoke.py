"""Smoke tests of `bench/layers.py`: the zoo's contraction shapes, and the script end to end
on its smallest shape (no timing is asserted: the ratios are for people to read)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

pytest.importorskip("onnx")

from layers import BERT, Conv, Matmul, Pool, zoo_layers  # noqa: E402

SMALLEST = "conv1x1_64x55x55_o16"


def test_zoo_shapes_are_read_from_the_models():
    layers = zoo_layers(["squeezenet", "resnet50"])
    stem = layers[Conv(3, 224, 224, 64, 7, 7, (2, 2), (3, 3, 3, 3))]
    assert stem.where == {"resnet50": 1}
    assert stem.shape.output == (112, 112)
    assert stem.shape.name == "conv7x7_3x224x224_o64_s2"
    fc = layers[Matmul(1, 1, 2048, 1000)]  # Gemm with transB: the same sizes, B as K x N
    assert fc.where == {"resnet50": 1}
    assert SMALLEST in {layer.shape.name for layer in layers.values()}
    assert all(layer.shape.flops > 0 for layer in layers.values())


def test_pools_are_read_with_their_ceil_mode_padding():
    assert not any(isinstance(x, Pool) for x in zoo_layers(["resnet50"]))
    layers = zoo_layers(["resnet50", "inception_v2"], pools=True)
    stem = layers[Pool("max", 64, 112, 112, 3, 3, (2, 2), (1, 1, 1, 1))]
    assert stem.where == {"resnet50": 1}
    assert stem.shape.name == "maxpool3x3_64x112x112_s2_p1-1-1-1"
    assert stem.shape.output == (56, 56)
    # inception_v2's ceil_mode=1 pool: one more row and column of padding at the end
    ceil = layers[Pool("max", 64, 112, 112, 3, 3, (2, 2), (0, 0, 1, 1))]
    assert ceil.where == {"inception_v2": 1}
    assert ceil.shape.output == (56, 56)


def test_bert_shapes():
    assert {shape.name for shape in BERT} == {
        "matmul_128x768x768",
        "matmul_128x768x3072",
        "matmul_128x3072x768",
        "matmul_12x128x64x128",
    }


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, str(BENCH / "layers.py"), *args]
    return subprocess.run(command, capture_output=True, text=True, check=False, cwd=tmp_path)


def test_list_names_every_shape(tmp_path):
    result = run(tmp_path, "--list", "--models", "squeezenet")
    assert result.returncode == 0, result.stderr
    names = [line.split()[0] for line in result.stdout.splitlines()]
    assert SMALLEST in names and "matmul_128x768x3072" in names
    assert len(names) == len(set(names))


def test_script_measures_one_shape(tmp_path):
    pytest.importorskip("onnxruntime")
    markdown = tmp_path / "layers.md"
    result = run(
        tmp_path, "--only", SMALLEST, "--runs", "1", "--peak", "100", "--markdown", str(markdown)
    )
    assert result.returncode == 0, result.stdout + result.stderr
    (row,) = [line for line in markdown.read_text().splitlines() if line.startswith("| conv")]
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[:2] == [SMALLEST, "squeezenet"]
    assert len(cells) == 11
    assert float(cells[-1]) < 1e-4  # ours agrees with onnxruntime
    assert row in result.stdout


def test_against_times_a_second_build_of_ours(tmp_path):
    pytest.importorskip("onnxruntime")
    result = run(
        tmp_path, "--only", SMALLEST, "--runs", "1", "--peak", "100", "--against", "collapse=false"
    )
    assert result.returncode == 0, result.stdout + result.stderr
    header, rule, row = [line for line in result.stdout.splitlines() if line.startswith("|")]
    assert header.endswith("| against ms | against/ours |")
    assert rule.count("---") == 13
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[0] == SMALLEST and len(cells) == 13
    assert float(cells[-2]) > 0 and float(cells[-1]) > 0


def test_unknown_shape_is_a_clear_error(tmp_path):
    result = run(tmp_path, "--only", "conv9x9_nothing", "--models", "squeezenet")
    assert result.returncode != 0
    assert "unknown shape(s) conv9x9_nothing" in result.stderr
    assert "Traceback" not in result.stderr
