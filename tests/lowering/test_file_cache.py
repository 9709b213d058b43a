"""The compile cache's file level (`file_cache`): an IR file compiled before loads again
without being parsed, with the constants the compile left (folded and packed), and anything
that could make those stale or wrong is a miss: new weights in the weights file, another
folder, a damaged or truncated constants file, a missing model entry."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from fusion_compiler import api
from fusion_compiler.dialects import diagnostics
from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import parse_source
from fusion_compiler.dialects.resources import WeightsFile
from fusion_compiler.dialects.weights_writer import externalize_constants
from fusion_compiler.driver import compile_file
from fusion_compiler.lowering import cache_blobs, compile_cache, file_cache
from fusion_compiler.tools import fusion_run

RNG = np.random.default_rng(7)
WEIGHTS = RNG.standard_normal((16, 8, 3, 3)).astype(np.float32)
SCALE = (RNG.random(16) + 0.5).astype(np.float32)


def _dense(array: np.ndarray) -> str:
    return f'dense<"0x{array.tobytes().hex().upper()}">'


# A conv whose batch norm fold-constants folds into its weights, which the load entry then packs:
# the constants a hit binds are neither the file's blobs nor the parsed ones.
SOURCE = f"""
func.func @main(%x: tensor<1x8x10x10xf32>) -> tensor<1x16x8x8xf32> {{
  %w = graph.constant {_dense(WEIGHTS)} : tensor<16x8x3x3xf32>
  %s = graph.constant {_dense(SCALE)} : tensor<16xf32>
  %z = graph.constant dense<0.125> : tensor<16xf32>
  %m = graph.constant dense<0.0> : tensor<16xf32>
  %v = graph.constant dense<1.0> : tensor<16xf32>
  %c = graph.conv2d %x, %w {{strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64}} : (tensor<1x8x10x10xf32>, tensor<16x8x3x3xf32>) -> tensor<1x16x8x8xf32>
  %b = graph.batch_norm %c, %s, %z, %m, %v {{epsilon = 1.000000e-05 : f32}} : (tensor<1x16x8x8xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x16x8x8xf32>
  %r = graph.relu %b : tensor<1x16x8x8xf32>
  func.return %r : tensor<1x16x8x8xf32>
}}
"""

X = RNG.standard_normal((1, 8, 10, 10)).astype(np.float32)


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    directory = tmp_path / "cache"
    monkeypatch.setenv(compile_cache.CACHE_VARIABLE, str(directory))
    return directory


def _write_model(folder: Path) -> Path:
    """model.mlir with its weights in model.weights, as `fusion-import -o` writes them."""
    folder.mkdir(parents=True, exist_ok=True)
    module = parse_source(make_context(), SOURCE, "model.mlir")
    externalize_constants(module, folder / "model.weights")
    path = folder / "model.mlir"
    path.write_text(str(module))
    return path


def _no_parse(monkeypatch) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError("a file-level hit must not parse")

    monkeypatch.setattr(diagnostics, "parse_source", refuse)


def _result(model) -> np.ndarray:
    return model.run("main", X)[0]


def test_a_file_compiled_before_loads_without_parsing(tmp_path, cache, monkeypatch):
    path = _write_model(tmp_path / "m")
    compiled = compile_file(path)
    assert not compiled.from_cache
    want = _result(compiled)
    assert list(cache.glob("*.constants"))
    with monkeypatch.context() as patch:
        _no_parse(patch)
        hit = compile_file(path)
        assert hit.from_cache and hit.native_key == compiled.native_key
        assert np.array_equal(_result(hit), want)
        assert hit.kernels("main") == compiled.kernels("main")
        assert [p.name for p in hit.functions["main"].parameters] == ["x"]
        model = api.compile(str(path))  # the Python API takes the same route
        assert np.array_equal(model(X), want)
    # (the constants are the folded and packed ones: the fused result of the original weights)
    assert np.array_equal(_result(compile_file(path, cache=False)), want)


def test_new_weights_in_the_weights_file_are_a_miss(tmp_path, cache):
    path = _write_model(tmp_path / "m")
    before = _result(compile_file(path))
    weights = tmp_path / "m" / "model.weights"
    with WeightsFile(weights) as opened:
        offset, size = opened.index["w"]
    data = bytearray(weights.read_bytes())
    last = offset + size - 4
    data[last : last + 4] = np.float32(5.0).tobytes()  # the conv's last weight, same tag
    weights.write_bytes(bytes(data))
    changed = compile_file(path)
    assert changed.from_cache  # the native code does not depend on the weights: a model hit
    after = _result(changed)
    assert not np.array_equal(after, before)
    assert np.array_equal(after, _result(compile_file(path, cache=False)))


def test_the_same_text_in_another_folder_is_a_miss(tmp_path, cache, monkeypatch):
    first = _write_model(tmp_path / "a")
    compile_file(first)
    second = _write_model(tmp_path / "b")
    assert second.read_text() == first.read_text()
    sources = []
    real = diagnostics.parse_source

    def counting(*args, **kwargs):
        sources.append(args[2])
        return real(*args, **kwargs)

    monkeypatch.setattr(diagnostics, "parse_source", counting)
    compile_file(second)
    assert sources == [str(second)]


def _damage(path: Path, damage: str) -> None:
    """One bit of `path` flipped, its last 4 bytes cut off, or the file deleted."""
    if damage == "flip":
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 0x40
        path.write_bytes(bytes(data))
    elif damage == "truncate":
        os.truncate(path, path.stat().st_size - 4)
    else:
        path.unlink()


@pytest.mark.parametrize("damage", ["flip", "truncate", "delete"])
def test_a_damaged_constants_file_is_a_miss(tmp_path, cache, damage):
    path = _write_model(tmp_path / "m")
    want = _result(compile_file(path))
    (constants,) = cache.glob("*.constants")
    _damage(constants, damage)
    source = file_cache.SourceFile(path, path.read_text())
    assert file_cache.load(source, _file_pipeline()) is None
    again = compile_file(path)  # parsed, a model hit, and the file entry written anew
    assert np.array_equal(_result(again), want)
    assert file_cache.load(source, _file_pipeline()) is not None


def test_a_missing_model_entry_is_a_miss(tmp_path, cache):
    path = _write_model(tmp_path / "m")
    compiled = compile_file(path)
    want = _result(compiled)
    (cache / f"{compiled.native_key}.entry").unlink()
    source = file_cache.SourceFile(path, path.read_text())
    assert file_cache.load(source, _file_pipeline()) is None
    assert np.array_equal(_result(compile_file(path)), want)


def test_a_profiling_build_is_kept_apart(tmp_path, cache):
    path = _write_model(tmp_path / "m")
    compile_file(path)
    profiling = compile_file(path, profile=True)
    assert not profiling.from_cache
    profiled = compile_file(path, profile=True)
    assert profiled.from_cache
    assert profiled.profile("main", X).kernels


def test_fusion_run_loads_a_file_compiled_before(tmp_path, cache, capsys):
    path = _write_model(tmp_path / "m")
    argv = [str(path), "--random-inputs", "--check"]
    assert fusion_run.main(argv) == 0
    assert "compiled in" in capsys.readouterr().out
    assert fusion_run.main(argv) == 0
    assert "from cache in" in capsys.readouterr().out
    assert len(list(cache.glob("*.constants"))) == 1


def _file_pipeline() -> str:
    from fusion_compiler.driver import DEFAULT_PIPELINE, cache_pipeline

    return cache_pipeline(DEFAULT_PIPELINE)


def test_constants_files_past_the_budget_go_least_recently_used_first(tmp_path, cache, monkeypatch):
    paths = [_write_model(tmp_path / name) for name in ("a", "b", "c")]
    for path in paths[:2]:
        compile_file(path)
    first, second = sorted(cache.glob("*.constants"), key=lambda p: p.stat().st_mtime_ns)
    size = first.stat().st_size
    os.utime(first, ns=(1, 1))  # a long time ago
    os.utime(second, ns=(2, 2))
    compile_file(paths[0])  # a hit makes the first the most recently used
    monkeypatch.setattr(cache_blobs, "budget_bytes", lambda: 2 * size)
    assert len(list(cache.glob("*.constants"))) == 2
    compile_file(paths[2])  # a third over a budget of two: the second goes
    kept = set(cache.glob("*.constants"))
    assert first in kept and second not in kept and len(kept) == 2
    assert not (cache / second.name.replace(".constants", ".entry")).exists()
    assert compile_file(paths[1]).from_cache  # (a miss of the file level, then a model hit)


def test_the_budget_is_in_megabytes_and_must_be_a_number(monkeypatch):
    monkeypatch.setenv(cache_blobs.BUDGET_VARIABLE, "3")
    assert cache_blobs.budget_bytes() == 3 * 2**20
    monkeypatch.setenv(cache_blobs.BUDGET_VARIABLE, "lots")
    with pytest.raises(ValueError, match="FUSION_CACHE_CONSTANTS_MB"):
        cache_blobs.budget_bytes()


# Two convolutions whose packed weights are blobs (at least `BLOB_MIN_BYTES` each).
FIRST = RNG.standard_normal((64, 48, 3, 3)).astype(np.float32)
SECOND = RNG.standard_normal((64, 64, 3, 3)).astype(np.float32)
_CONV = "{strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64}"


def _large_source(second: np.ndarray) -> str:
    return f"""
func.func @main(%x: tensor<1x48x8x8xf32>) -> tensor<1x64x8x8xf32> {{
  %w1 = graph.constant {_dense(FIRST)} : tensor<64x48x3x3xf32>
  %w2 = graph.constant {_dense(second)} : tensor<64x64x3x3xf32>
  %c1 = graph.conv2d %x, %w1 {_CONV} : (tensor<1x48x8x8xf32>, tensor<64x48x3x3xf32>) -> tensor<1x64x8x8xf32>
  %r1 = graph.relu %c1 : tensor<1x64x8x8xf32>
  %c2 = graph.conv2d %r1, %w2 {_CONV} : (tensor<1x64x8x8xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x8x8xf32>
  %r2 = graph.relu %c2 : tensor<1x64x8x8xf32>
  func.return %r2 : tensor<1x64x8x8xf32>
}}
"""


LARGE_X = RNG.standard_normal((1, 48, 8, 8)).astype(np.float32)


def _write_large_model(folder: Path, second: np.ndarray = SECOND) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    module = parse_source(make_context(), _large_source(second), "model.mlir")
    externalize_constants(module, folder / "model.weights")
    path = folder / "model.mlir"
    path.write_text(str(module))
    return path


def _blobs(cache: Path) -> list[Path]:
    return sorted((cache / cache_blobs.BLOB_FOLDER).glob("*"))


def _written(monkeypatch) -> list[Path]:
    """The paths the cache writes from now on."""
    paths: list[Path] = []
    real = compile_cache.atomic_write

    def recording(path, data):
        paths.append(path)
        real(path, data)

    monkeypatch.setattr(compile_cache, "atomic_write", recording)
    return paths


def test_large_constants_are_blobs_shared_between_entries(tmp_path, cache, monkeypatch):
    first = _write_large_model(tmp_path / "a")
    want = compile_file(first).run("main", LARGE_X)[0]
    blobs = _blobs(cache)
    assert len(blobs) == 2  # (the two packed weights: 64 KiB or more whatever the tile width)
    assert all(blob.stat().st_size >= cache_blobs.BLOB_MIN_BYTES for blob in blobs)
    written = _written(monkeypatch)
    second = _write_large_model(tmp_path / "b")  # the same model in another file: a file miss
    again = compile_file(second)
    assert np.array_equal(again.run("main", LARGE_X)[0], want)
    assert _blobs(cache) == blobs and not any(p.parent.name == "blobs" for p in written)
    with monkeypatch.context() as patch:
        _no_parse(patch)
        hit = compile_file(second)
    assert hit.from_cache and np.array_equal(hit.run("main", LARGE_X)[0], want)


def test_an_edited_weight_stores_only_its_own_blob(tmp_path, cache, monkeypatch):
    path = _write_large_model(tmp_path / "m")
    compile_file(path)
    before = set(_blobs(cache))
    written = _written(monkeypatch)
    edited = _write_large_model(tmp_path / "m", SECOND * np.float32(0.5))
    model = compile_file(edited)
    # (the packing kernel writes its new blob in place, `load_memo`: nothing is copied in)
    assert not [p for p in written if p.parent.name == "blobs"]
    assert len(set(_blobs(cache)) - before) == 1
    want = compile_file(edited, cache=False).run("main", LARGE_X)[0]
    assert np.array_equal(model.run("main", LARGE_X)[0], want)


@pytest.mark.parametrize("pieces", ["one piece", "many pieces"])
@pytest.mark.parametrize("damage", ["flip", "truncate", "delete"])
def test_a_damaged_blob_is_a_miss_and_is_written_again(
    tmp_path, cache, monkeypatch, damage, pieces
):
    if pieces == "many pieces":  # (hashed and checked piece by piece)
        monkeypatch.setattr(cache_blobs, "PIECE_BYTES", 4096)
    path = _write_large_model(tmp_path / "m")
    want = compile_file(path).run("main", LARGE_X)[0]
    _damage(_blobs(cache)[0], damage)
    source = file_cache.SourceFile(path, path.read_text())
    assert file_cache.load(source, _file_pipeline()) is None
    again = compile_file(path)
    assert np.array_equal(again.run("main", LARGE_X)[0], want)
    assert file_cache.load(source, _file_pipeline()) is not None


def test_blobs_count_in_the_budget(tmp_path, cache, monkeypatch):
    first = _write_large_model(tmp_path / "a")
    compile_file(first)
    old = _blobs(cache)
    for blob in old:
        os.utime(blob, ns=(1, 1))  # a long time ago
    monkeypatch.setattr(cache_blobs, "budget_bytes", lambda: 1)  # room for the newest only
    second = _write_large_model(tmp_path / "b", SECOND * np.float32(2.0))
    compile_file(second)
    kept = _blobs(cache)
    assert len(kept) == 2 and len(set(old) & set(kept)) == 1  # (the first conv's is shared)
    source = file_cache.SourceFile(second, second.read_text())
    assert file_cache.load(source, _file_pipeline()) is not None  # (its own blobs stayed)
    assert (
        file_cache.load(file_cache.SourceFile(first, first.read_text()), _file_pipeline()) is None
    )


@pytest.mark.parametrize("piece_bytes", [16 << 20, 4096], ids=["one piece", "many pieces"])
def test_blob_names_and_checksums_agree_whichever_asks(monkeypatch, piece_bytes):
    """`content_names` and `piece_checksums` give what `content_digests` gives (the load memo
    names inputs with the first, names results by their launch and checks them with the
    second), a piece at a time, on every core: the name is the SHA-256 of the size and of
    the pieces' SHA-256s, each checksum zlib's CRC-32 of a piece."""
    import hashlib
    import zlib

    monkeypatch.setattr(cache_blobs, "PIECE_BYTES", piece_bytes)
    raws = [memoryview(RNG.bytes(size)) for size in (10_000, 4096, 1, 70_000)]
    digests = cache_blobs.content_digests(raws)
    assert cache_blobs.content_names(raws) == {i: name for i, (name, _) in digests.items()}
    assert cache_blobs.piece_checksums(raws) == {i: crcs for i, (_, crcs) in digests.items()}
    raw = raws[3]
    pieces = [raw[start : start + piece_bytes] for start in range(0, raw.nbytes, piece_bytes)]
    name = hashlib.sha256(raw.nbytes.to_bytes(8, "little"))
    for piece in pieces:
        name.update(hashlib.sha256(piece).digest())
    assert digests[id(raw)] == (name.hexdigest(), [zlib.crc32(piece) for piece in pieces])


HIT_PROCESS = """
import sys
import numpy as np
from fusion_compiler.driver import compile_file
model = compile_file(sys.argv[1])
(y,) = model.run("main", np.load(sys.argv[2]))
np.save(sys.argv[3], y)
heavy = ("xdsl", "email")  # (`email`: what `importlib.metadata` loads, `host.installed_version`)
loaded = sorted(n for n in sys.modules if n.split(".")[0] in heavy or ".passes" in n)
print(model.from_cache, ",".join(loaded))
"""


def test_a_hit_in_a_new_process_imports_no_ir_machinery(cache, tmp_path):
    """What a hit and a run need (the cache's entries, the JIT, numpy) is imported, not xDSL,
    the dialects' ops or a pass: a new process that loads an unchanged model and runs it
    imported 0.41-0.56 s of modules for the zoo's models, of which the hit used none (Zen 5;
    `bench/compile_time.py`'s `hit process`)."""
    import subprocess
    import sys

    path = _write_model(tmp_path / "m")
    expected = compile_file(path).run("main", X)[0]
    np.save(tmp_path / "x.npy", X)
    out = tmp_path / "y.npy"
    done = subprocess.run(
        [sys.executable, "-c", HIT_PROCESS, str(path), str(tmp_path / "x.npy"), str(out)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.split() == ["True"]  # a hit, no module of xDSL, the passes or `email`
    np.testing.assert_array_equal(np.load(out), expected)
