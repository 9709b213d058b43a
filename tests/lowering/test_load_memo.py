"""The load memo: a load entry's results (the packed weights) kept by its unit and its inputs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import parse_source
from fusion_compiler.driver import compile_module
from fusion_compiler.lowering import cache_blobs, compile_cache, load_memo
from fusion_compiler.lowering.compile_cache import LoadBinding
from fusion_compiler.lowering.jit import JitModule, NativeUnit
from fusion_compiler.lowering.load_launches import LoadLaunch, with_launches

RNG = np.random.default_rng(11)
# Two convolutions whose packed weights are blobs on every host: on 4 x 4 pixels their
# weights are the panel on AVX2 and AVX-512 alike (on 8 x 8 an AVX-512 host vectorises the
# first one along its 64 pixels, packed per launch).
FIRST = RNG.standard_normal((64, 48, 3, 3)).astype(np.float32)
SECOND = RNG.standard_normal((64, 64, 3, 3)).astype(np.float32)
X = RNG.standard_normal((1, 48, 4, 4)).astype(np.float32)
_CONV = (
    "{strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, "
    "dilation = array<i64: 1, 1>, groups = 1 : i64}"
)


def _dense(array: np.ndarray) -> str:
    return f'dense<"0x{array.tobytes().hex().upper()}">'


def _source(activation: str = "relu", second: np.ndarray = SECOND) -> str:
    """Two convolutions (each packs its weights at load time) and an activation between."""
    return f"""
func.func @main(%x: tensor<1x48x4x4xf32>) -> tensor<1x64x4x4xf32> {{
  %w1 = graph.constant {_dense(FIRST)} : tensor<64x48x3x3xf32>
  %w2 = graph.constant {_dense(second)} : tensor<64x64x3x3xf32>
  %c1 = graph.conv2d %x, %w1 {_CONV} : (tensor<1x48x4x4xf32>, tensor<64x48x3x3xf32>) -> tensor<1x64x4x4xf32>
  %a1 = graph.{activation} %c1 : tensor<1x64x4x4xf32>
  %c2 = graph.conv2d %a1, %w2 {_CONV} : (tensor<1x64x4x4xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x4x4xf32>
  %r2 = graph.relu %c2 : tensor<1x64x4x4xf32>
  func.return %r2 : tensor<1x64x4x4xf32>
}}
"""


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    directory = tmp_path / "cache"
    monkeypatch.setenv(compile_cache.CACHE_VARIABLE, str(directory))
    return directory


@pytest.fixture
def lookups(monkeypatch) -> list[bool]:
    """Whether each lookup of the load memo from now on found the results."""
    found: list[bool] = []
    real = load_memo.load

    def recording(*args):
        kept = real(*args)
        found.append(kept is not None)
        return kept

    monkeypatch.setattr(load_memo, "load", recording)
    return found


def _compile(text: str, cache: bool = True):
    return compile_module(parse_source(make_context(), text, "model.mlir"), cache=cache)


def _blobs(cache: Path) -> set[Path]:
    return set((cache / cache_blobs.BLOB_FOLDER).glob("*"))


def test_an_op_edited_elsewhere_maps_the_packed_weights(cache, lookups):
    _compile(_source("relu"))
    assert lookups == [False, False]
    blobs = _blobs(cache)
    assert len(blobs) == 2  # (the two packed weights)
    edited = _compile(_source("sigmoid"))
    # (the packing kernels are named after what they pack, not after their groups, which
    # the edit renamed: both packed weights come from the cache)
    assert lookups == [False, False, True, True]
    assert _blobs(cache) == blobs
    assert edited.blob_digests  # (the file cache need not hash them again)
    want = _compile(_source("sigmoid"), cache=False).main(X)[0]
    assert np.array_equal(edited.main(X)[0], want)


def test_an_edit_compiled_in_the_background_looks_the_packed_weights_up_meanwhile(
    cache, monkeypatch
):
    """While this process waits for the background worker compiling an op edit's new kernel
    (and only that: its packing kernel is unchanged, in the cache), a thread looks up the
    packed weights (`load_memo.Prefetch`); the binding takes them and looks up nothing
    again. The same bits as a compile without the cache."""
    import threading

    from fusion_compiler.host import JOBS_VARIABLE
    from fusion_compiler.lowering import schedule_workers

    monkeypatch.setenv(JOBS_VARIABLE, "2")
    monkeypatch.setattr(schedule_workers, "BACKGROUND_MIN_OPS", 0)
    _compile(_source("relu"))
    found: list[tuple[bool, bool]] = []  # (on the main thread, found)
    real = load_memo.load

    def recording(*args):
        kept = real(*args)
        found.append((threading.current_thread() is threading.main_thread(), kept is not None))
        return kept

    monkeypatch.setattr(load_memo, "load", recording)
    collected = []
    collect = schedule_workers.ScheduleWorkers.collect

    def noting_collect(self, *args):
        collected.append(len(self.promised))
        return collect(self, *args)

    monkeypatch.setattr(schedule_workers.ScheduleWorkers, "collect", noting_collect)
    edited = _compile(_source("sigmoid"))
    # (the edited kernel's unit came from a background worker; not its packing kernel's,
    # which the cache holds: this process loaded it, and the lookups could start)
    assert collected == [1]
    assert found == [(False, True), (False, True)]
    want = _compile(_source("sigmoid"), cache=False).main(X)[0]
    assert np.array_equal(edited.main(X)[0], want)


def test_other_weights_are_a_miss(cache, lookups):
    _compile(_source())
    before = _blobs(cache)
    second = SECOND * np.float32(0.5)
    model = _compile(_source(second=second))
    assert lookups == [False, False, True, False]  # (the first conv's weights: a hit)
    want = _compile(_source(second=second), cache=False).main(X)[0]
    assert np.array_equal(model.main(X)[0], want)
    assert len(_blobs(cache) - before) == 1  # (the first conv's packed weights are shared)


@pytest.mark.parametrize("damage", ["flip", "truncate", "delete"])
def test_a_damaged_blob_is_a_miss(cache, lookups, damage):
    want = _compile(_source()).main(X)[0]
    blob = sorted(_blobs(cache))[0]
    if damage == "delete":
        blob.unlink()
    elif damage == "truncate":
        blob.write_bytes(blob.read_bytes()[:-4])
    else:
        data = bytearray(blob.read_bytes())
        data[len(data) // 2] ^= 0x40
        blob.write_bytes(bytes(data))
    model = _compile(_source())  # (a model hit, whose launches' results are looked up)
    assert sorted(lookups[2:]) == [False, True]  # (the damaged one is a miss)
    assert np.array_equal(model.main(X)[0], want)
    assert _compile(_source()).main(X)[0].tobytes() == want.tobytes()
    assert lookups[4:] == [True, True]  # (written again)


def test_packed_weights_are_written_into_their_blobs(cache, monkeypatch):
    """A launch writes each result that is a blob into the blob's own file (mapped), which is
    then given its name: nothing is copied into a blob, no temporary file is left, and the
    model binds the blobs."""
    copied: list[Path] = []
    real = compile_cache.atomic_write
    monkeypatch.setattr(
        compile_cache, "atomic_write", lambda path, data: copied.append(path) or real(path, data)
    )
    model = _compile(_source())
    assert not [path for path in copied if path.parent.name == cache_blobs.BLOB_FOLDER]
    blobs = _blobs(cache)
    assert len(blobs) == 2 and not [b.name for b in blobs if b.name.startswith(".")]
    bound = {array.tobytes() for array in model.functions["main"].constants}
    assert {blob.read_bytes() for blob in blobs} <= bound
    assert np.array_equal(model.main(X)[0], _compile(_source(), cache=False).main(X)[0])


def test_results_go_to_memory_when_no_blob_file_can_be_made(cache, monkeypatch):
    monkeypatch.setattr(load_memo, "blob_buffer", lambda *args: None)
    model = _compile(_source())
    assert len(_blobs(cache)) == 2  # (written from memory)
    assert np.array_equal(model.main(X)[0], _compile(_source(), cache=False).main(X)[0])


def test_a_failed_launch_leaves_no_blob_file(cache, monkeypatch):
    def failing(self, name, *arrays):
        raise RuntimeError(f"{name} failed")

    monkeypatch.setattr(JitModule, "call_kernel", failing)
    with pytest.raises(RuntimeError, match="prepack_.* failed"):
        _compile(_source())
    assert _blobs(cache) == set()


def test_without_the_cache_nothing_is_kept(tmp_path, monkeypatch, lookups):
    monkeypatch.setenv(compile_cache.CACHE_VARIABLE, "")
    _compile(_source())
    assert lookups == []


def test_the_launches_are_recorded_with_the_model(cache, lookups):
    _compile(_source())
    (binding,) = model_bindings(cache)
    kernels = [launch.kernel for launch in binding.launches]
    assert len(kernels) == 2 and all(kernel.startswith("prepack_") for kernel in kernels)
    written = sorted(index for launch in binding.launches for index in launch.outputs)
    assert written == list(range(len(binding.results)))  # (each result once)
    again = _compile(_source())  # (a model hit: the launches' results come from the cache)
    assert again.from_cache and lookups == [False, False, True, True]


def model_bindings(cache: Path) -> list[LoadBinding]:
    """The load bindings of the model entries in `cache`."""
    bindings = []
    for entry in cache.glob("*.entry"):
        meta = compile_cache.read_meta(cache, entry.name.removesuffix(".entry"))
        if meta is not None and "bindings" in meta:
            bindings += [LoadBinding.of_data(b) for b in meta["bindings"].values()]
    return bindings


def test_the_key_covers_the_kernel_and_each_input():
    launch = LoadLaunch("pack_1234", "u" * 64, (0,), (0,))
    described = [["<f4", [4], "d" * 64]]
    key = load_memo._launch_key(launch, described)
    others = [
        (launch, [["<f4", [2, 2], "d" * 64]]),
        (launch, [["<i4", [4], "d" * 64]]),
        (launch, [["<f4", [4], "e" * 64]]),
        (LoadLaunch("pack_1234", "v" * 64, (0,), (0,)), described),
        (LoadLaunch("pack_5678", "u" * 64, (0,), (0,)), described),
    ]
    assert all(load_memo._launch_key(other, inputs) != key for other, inputs in others)


def _unit(kernels: list[str], externals: list[str]) -> NativeUnit:
    return NativeUnit("", b"", dict.fromkeys(kernels), tuple(externals))  # type: ignore[arg-type]


def test_a_launch_that_reaches_the_blas_library_is_not_kept():
    binding = LoadBinding("main__load", (0,), (((4,), "float32"),), (-1,))
    keys = ["pack-key", "gemm-key", "calls-gemm-key"]
    compiled = [
        _unit(["pack"], ["GOMP_parallel"]),
        _unit(["gemm"], ["scipy_cblas_sgemm"]),
        _unit(["calls_gemm"], ["gemm"]),
    ]
    packs = {"main__load": [("pack", 0, (0,), (0,))]}
    (launch,) = with_launches({"main": binding}, packs, keys, compiled)["main"].launches
    assert launch == LoadLaunch("pack", "pack-key", (0,), (0,))
    through = {"main__load": [("calls_gemm", 2, (0,), (0,))]}
    assert with_launches({"main": binding}, through, keys, compiled)["main"].launches == ()
