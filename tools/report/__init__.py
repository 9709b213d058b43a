"""`fusion-report`: what fuse-ops fused in a model, why, and what it saves.

`model` computes the report from the IR, `traffic` the launch and memory-traffic figures,
`layout` the drawing, and `svg`, `html`, `dot`, `json_export` and `summary` its forms.
"""
