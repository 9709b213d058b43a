"""The pass-manager API, at its old address: everything here lives in `fusion_compiler.driver`
(the pass registry, the named pipelines, `PassManager`) and `fusion_compiler.instruments`.

New code imports from there, or from `fusion_compiler` itself.
"""

from fusion_compiler.driver import (
    DEFAULT_PIPELINE,
    FUSION_PIPELINE,
    UNFUSED_PIPELINE,
    PassManager,
    parse_pipeline,
)
from fusion_compiler.instruments import PassInstrument, PassTimer, PrintIRAfterPass

__all__ = [
    "DEFAULT_PIPELINE",
    "FUSION_PIPELINE",
    "UNFUSED_PIPELINE",
    "PassInstrument",
    "PassManager",
    "PassTimer",
    "PrintIRAfterPass",
    "parse_pipeline",
]
