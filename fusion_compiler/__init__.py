"""fusion_compiler: an MLIR-style operator-fusion compiler on xDSL.

```python
import fusion_compiler as fc

model = fc.compile("model.onnx")        # or an .mlir file, IR text, an xDSL module, a ModelProto
y = model(x)                            # or model(input_ids=x); model.run(x) -> {name: array}
module = fc.parse("examples/ffn.mlir")  # the graph-level IR
fc.PassManager(fc.FUSION_PIPELINE).run(module)
```

The public names are listed in `__all__` and loaded on first use, so that importing one stage
(`fusion_compiler.dialects`, say) does not load the compiler. The stage packages live in the
repository's top-level folders and are installed under this namespace (pyproject.toml's
`package-dir` table): `fusion_compiler.dialects` (`fusion_dialects/`), `fusion_compiler.passes`
(`passes/`), `fusion_compiler.lowering` (`lowering/`), `fusion_compiler.frontend`
(`frontend/`) and `fusion_compiler.tools` (`tools/`). This folder holds the modules above them:
`errors` (the one error base class), `driver` (the pass registry, the named pipelines, the
pass manager and the compile driver), `instruments`, `model` and `api`, and `universe` (what
`xdsl-opt` discovers).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fusion_compiler.api import compile, parse, set_num_threads
    from fusion_compiler.dialects.diagnostics import CompileError
    from fusion_compiler.driver import (
        DEFAULT_PIPELINE,
        FUSION_PIPELINE,
        UNFUSED_PIPELINE,
        PassManager,
    )
    from fusion_compiler.errors import ArgumentError, FusionError, PassOptionError
    from fusion_compiler.instruments import PassInstrument, PassTimer, PrintIRAfterPass
    from fusion_compiler.lowering.machine_roofs import Roofs
    from fusion_compiler.lowering.profile_report import Profile
    from fusion_compiler.model import Model

_HOMES = {
    "compile": "fusion_compiler.api",
    "parse": "fusion_compiler.api",
    "set_num_threads": "fusion_compiler.api",
    "Model": "fusion_compiler.model",
    "Profile": "fusion_compiler.lowering.profile_report",
    "Roofs": "fusion_compiler.lowering.machine_roofs",
    "PassManager": "fusion_compiler.driver",
    "FUSION_PIPELINE": "fusion_compiler.driver",
    "DEFAULT_PIPELINE": "fusion_compiler.driver",
    "UNFUSED_PIPELINE": "fusion_compiler.driver",
    "PassInstrument": "fusion_compiler.instruments",
    "PassTimer": "fusion_compiler.instruments",
    "PrintIRAfterPass": "fusion_compiler.instruments",
    "FusionError": "fusion_compiler.errors",
    "ArgumentError": "fusion_compiler.errors",
    "PassOptionError": "fusion_compiler.errors",
    "CompileError": "fusion_compiler.dialects.diagnostics",
}
"""Each public name and the module that defines it."""

__all__ = [
    "DEFAULT_PIPELINE",
    "FUSION_PIPELINE",
    "UNFUSED_PIPELINE",
    "ArgumentError",
    "CompileError",
    "FusionError",
    "Model",
    "PassInstrument",
    "PassManager",
    "PassOptionError",
    "PassTimer",
    "PrintIRAfterPass",
    "Profile",
    "Roofs",
    "compile",
    "parse",
    "set_num_threads",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'fusion_compiler' has no attribute '{name}'")
    value = getattr(import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
