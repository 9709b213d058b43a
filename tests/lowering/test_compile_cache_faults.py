"""The compile cache under faults: a damaged, truncated or foreign entry is a miss (never an
LLVM abort), an unwritable or full cache warns once and the compile goes on, an interrupted
or killed compile leaves nothing that loads wrong, and two processes compiling the same model
at once both succeed.

Each compile that could abort the interpreter if the cache were wrong runs in a subprocess
(`LLVM ERROR` ends the process with status 134, which pytest could not catch)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import parse_source
from fusion_compiler.lowering import cache_files, compile_cache, ir_hash
from fusion_compiler.lowering.compiled_model import compile_module

SOURCE = """
func.func @main(%x: tensor<64xf32>) -> tensor<64xf32> {
  %b = graph.constant dense<0.25> : tensor<64xf32>
  %a = graph.add %x, %b : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %r = graph.relu %a : tensor<64xf32>
  func.return %r : tensor<64xf32>
}
"""

COMPILE_AND_RUN = f"""
import json, sys
import numpy as np
from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import parse_source
from fusion_compiler.lowering.compiled_model import compile_module
module = parse_source(make_context(), {SOURCE!r}, "faults.mlir")
model = compile_module(module)
x = np.linspace(-1, 1, 64, dtype=np.float32)
(y,) = model.run("main", x)
ok = bool(np.array_equal(y, np.maximum(x + np.float32(0.25), 0)))
print(json.dumps({{"from_cache": model.from_cache, "ok": ok}}))
"""


def compile_in_subprocess(cache: Path) -> dict:
    """Compile and run SOURCE in a new process using `cache`; its report."""
    environment = {**os.environ, compile_cache.CACHE_VARIABLE: str(cache)}
    result = subprocess.run(
        [sys.executable, "-c", COMPILE_AND_RUN], env=environment, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def no_temporary_files(cache: Path) -> bool:
    return not [p for p in cache.iterdir() if p.name.endswith(".tmp")]


def flip_byte_at(fraction: float):
    def damage(data: bytes) -> bytes:
        index = int(len(data) * fraction)
        return data[:index] + bytes([data[index] ^ 0xFF]) + data[index + 1 :]

    return damage


DAMAGES = {
    "truncated": lambda data: data[: len(data) // 2],
    "empty": lambda data: b"",
    "garbage": lambda data: os.urandom(len(data)),
    "object code flipped": flip_byte_at(0.9),  # the payload ends with object code and meta
    "header flipped": flip_byte_at(0.01),
    "an ELF header only": lambda data: b"\x7fELF" + b"\0" * 60,
}


@pytest.fixture(scope="module")
def pristine_entries(tmp_path_factory) -> dict[str, bytes]:
    """File name → contents of the cache entries of SOURCE (the model's, one per unit: the
    fused kernel's and the entry function's, the schedule memo's record of the kernel, and
    the pattern kinds of the two kernels legalize-ops made), compiled in this process."""
    cache = tmp_path_factory.mktemp("pristine")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(compile_cache.CACHE_VARIABLE, str(cache))
        compile_module(parse_source(make_context(), SOURCE, "faults.mlir"))
    entries = {entry.name: entry.read_bytes() for entry in cache.glob("*.entry")}
    assert len(entries) == 6
    return entries


@pytest.mark.parametrize("damage", list(DAMAGES), ids=list(DAMAGES))
def test_a_damaged_entry_is_a_miss_and_is_replaced(tmp_path, pristine_entries, damage):
    cache = tmp_path / "cache"
    cache.mkdir()
    for name, data in pristine_entries.items():
        (cache / name).write_bytes(DAMAGES[damage](data))
    assert compile_in_subprocess(cache) == {"from_cache": False, "ok": True}
    for name in pristine_entries:
        assert compile_cache._parse_entry((cache / name).read_bytes()) is not None


def test_parsing_rejects_every_truncation_of_an_entry(pristine_entries):
    for data in pristine_entries.values():
        assert compile_cache._parse_entry(data) is not None
        for size in range(0, len(data), max(1, len(data) // 97)):
            assert compile_cache._parse_entry(data[:size]) is None


def test_two_processes_compiling_at_once_both_succeed(tmp_path):
    cache = tmp_path / "cache"
    environment = {**os.environ, compile_cache.CACHE_VARIABLE: str(cache)}
    command = [sys.executable, "-c", COMPILE_AND_RUN]
    processes = [
        subprocess.Popen(command, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    for process in processes:
        stdout, stderr = process.communicate(timeout=120)
        assert process.returncode == 0, stderr.decode()[-2000:]
        assert json.loads(stdout.decode().splitlines()[-1])["ok"]
    assert no_temporary_files(cache)
    assert compile_in_subprocess(cache) == {"from_cache": True, "ok": True}


@pytest.mark.parametrize(
    "how, after", [(signal.SIGINT, 0.8), (signal.SIGKILL, 1.6)], ids=["SIGINT", "SIGKILL"]
)
def test_an_interrupted_compile_leaves_nothing_that_loads_wrong(tmp_path, how, after):
    cache = tmp_path / "cache"
    environment = {**os.environ, compile_cache.CACHE_VARIABLE: str(cache)}
    process = subprocess.Popen(
        [sys.executable, "-c", COMPILE_AND_RUN],
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(after)
    process.send_signal(how)
    process.wait(timeout=120)
    entries = list(cache.glob("*.entry")) if cache.exists() else []
    for entry in entries:
        assert compile_cache._parse_entry(entry.read_bytes()) is not None
    assert compile_in_subprocess(cache)["ok"]


def test_an_interrupted_write_leaves_no_file(tmp_path, monkeypatch):
    written = []

    def interrupted(handle, data, offset):
        written.append(handle)
        raise KeyboardInterrupt

    monkeypatch.setattr(cache_files, "write_at", interrupted)
    target = tmp_path / "entry"
    with pytest.raises(KeyboardInterrupt):
        cache_files.atomic_write(target, b"data")
    assert written and list(tmp_path.iterdir()) == []
    with pytest.raises(OSError):  # (the temporary file's descriptor was closed)
        os.fstat(written[0])


def _compile_twice_collecting_warnings() -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            model = compile_module(parse_source(make_context(), SOURCE, "faults.mlir"))
            x = np.linspace(-1, 1, 64, dtype=np.float32)
            np.testing.assert_array_equal(model.run("main", x)[0], np.maximum(x + 0.25, 0))
            assert not model.from_cache
    return [w for w in caught if issubclass(w.category, compile_cache.CacheWarning)]


def test_an_unwritable_cache_warns_once_and_compiles(tmp_path, monkeypatch):
    blocker = tmp_path / "a file"
    blocker.write_text("not a folder")
    cache = blocker / "cache"  # cannot be created, whoever runs the tests (root included)
    monkeypatch.setenv(compile_cache.CACHE_VARIABLE, str(cache))
    monkeypatch.setattr(compile_cache, "_warned_directories", set())
    (warning,) = _compile_twice_collecting_warnings()
    assert str(cache) in str(warning.message) and "without it" in str(warning.message)


def test_a_full_disk_warns_once_and_compiles(tmp_path, monkeypatch):
    def full(path, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setenv(compile_cache.CACHE_VARIABLE, str(tmp_path))
    monkeypatch.setattr(compile_cache, "_warned_directories", set())
    monkeypatch.setattr(compile_cache, "atomic_write", full)
    (warning,) = _compile_twice_collecting_warnings()
    assert "No space left on device" in str(warning.message)


def test_the_key_hashes_constant_bytes_not_their_text():
    context = make_context()
    first = parse_source(context, SOURCE, "a.mlir")
    same = parse_source(context, SOURCE, "b.mlir")
    other = parse_source(context, SOURCE.replace("0.25", "0.2500001"), "c.mlir")
    assert ir_hash.module_hash(first) == ir_hash.module_hash(same)
    assert ir_hash.module_hash(first) != ir_hash.module_hash(other)
