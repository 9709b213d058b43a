"""What `fusion-run` reads of an entry function's IR to run it, kept in the compile cache beside
the file's entry, so that a run of a file the cache holds parses nothing.

To run `@entry` of a file, `fusion-run` needs of its IR: the parameters (name, shape, dtype:
`run_ir.argument_specs`), what drawing or checking each argument's values reads
(`run_ir.argument_facts`: the domain restriction it feeds, the gather axis it indexes) and
the memory the run needs at least (`run_memory.memory_needed`). Parsing and verifying the file
for them took most of a run of a model the cache holds: densenet121's 0.23 of 0.52 s beside
the model's load (0.05 s; three runs timed stage by stage, Zen 5). A compile of the file (with the cache, from the file) keeps them in
a metadata entry of the compile cache (`compile_cache.store_meta`, checksummed), keyed like the
file's own entry (`file_cache`: the file's text and folder, the pipeline, the compiler's source,
the CPU) and the entry's name; a later run takes them with the model from the file level and
parses nothing. Whatever is missing or does not fit (another entry, a damaged or foreign
record, a run that needs the IR: `--check`, `--bench`, `--input-shape`, a function with
dynamic dimensions, one that does not fit in memory: its error names the IR) runs as before,
from the parse.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fusion_compiler.lowering import compile_cache
from fusion_compiler.lowering.file_cache import SourceFile
from fusion_compiler.tools.run_inputs import ArgumentFacts, ArgumentSpec

FORMAT = "run facts 1"

PURPOSE = "run-facts"
"""The part of the key that keeps these entries apart from the file's own (`key`)."""


@dataclass(frozen=True)
class RunFacts:
    """An entry function's facts for a run: its parameters, each argument's facts, and the
    bytes of its inputs, its outputs and its largest intermediate tensor."""

    specs: list[ArgumentSpec]
    arguments: list[ArgumentFacts]
    memory: tuple[int, int, int]

    def data(self) -> dict:
        return {
            "format": FORMAT,
            "specs": [[s.index, s.name, list(s.shape), s.dtype.str] for s in self.specs],
            "arguments": [
                [a.restriction, None if a.index_bound is None else list(a.index_bound)]
                for a in self.arguments
            ],
            "memory": list(self.memory),
        }

    @staticmethod
    def of_data(data: dict) -> RunFacts:
        if data.get("format") != FORMAT:
            raise ValueError("another format")
        specs = [
            ArgumentSpec(int(i), str(n), tuple(int(d) for d in shape), np.dtype(dtype))
            for i, n, shape, dtype in data["specs"]
        ]
        arguments = [
            ArgumentFacts(
                None if restriction is None else str(restriction),
                None if bound is None else (int(bound[0]), str(bound[1])),
            )
            for restriction, bound in data["arguments"]
        ]
        if len(arguments) != len(specs):
            raise ValueError("one fact per argument")
        inputs, outputs, largest = (int(n) for n in data["memory"])
        return RunFacts(specs, arguments, (inputs, outputs, largest))


def key(source: SourceFile, pipeline: str, entry: str) -> str:
    """The key of `entry`'s facts in the file `source` compiled with `pipeline`."""
    return source.key(f"{PURPOSE}:{entry}:{pipeline}")


def load(source: SourceFile, pipeline: str, entry: str) -> RunFacts | None:
    """The facts a compile of `source` with `pipeline` kept for `entry`, or None."""
    directory = compile_cache.cache_dir()
    if directory is None:
        return None
    data = compile_cache.read_meta(directory, key(source, pipeline, entry))
    if data is None:
        return None
    try:
        return RunFacts.of_data(data)
    except (KeyError, TypeError, ValueError):
        return None


def store(source: SourceFile, pipeline: str, entry: str, facts: RunFacts) -> None:
    """Keeps `facts` for `load` (nothing without a cache)."""
    directory = compile_cache.cache_dir()
    if directory is not None:
        compile_cache.store_meta(directory, key(source, pipeline, entry), facts.data())
