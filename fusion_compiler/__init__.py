"""fusion_compiler: an MLIR-style operator-fusion compiler on xDSL.

The stage packages live in the repository's top-level folders and are installed under this
namespace (pyproject.toml's `package-dir` table): `fusion_compiler.dialects` (`fusion_dialects/`),
`fusion_compiler.passes` (`passes/`), `fusion_compiler.lowering` (`lowering/`),
`fusion_compiler.frontend` (`frontend/`) and `fusion_compiler.tools` (`tools/`).
"""
