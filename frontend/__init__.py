"""Frontends: models from other frameworks into the graph dialect.

`fusion_compiler.frontend.onnx_importer.import_model` turns an `onnx.ModelProto` into a module holding
`func.func @main` over graph ops. The ONNX frontend needs the optional `onnx` package
(`pip install 'fusion-compiler[onnx]'`); nothing else in the project imports it.
"""
