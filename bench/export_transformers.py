"""Regenerate the tiny transformer test models `tests/models/{bert,gpt2,vit}_{static,dynamic}.onnx`.

    /work/torchvenv/bin/python bench/export_transformers.py [--out tests/models] [--only bert,gpt2]

Runs ONLY in a throwaway venv holding torch (CPU), `transformers` 4.x, onnx and onnxscript —
never in the project's venv, and never in CI: the committed `.onnx` files are what the test
suite uses, so neither torch nor transformers is a dependency of the project. Set it up with

    python3 -m venv /work/torchvenv
    /work/torchvenv/bin/pip install torch-2.13.0+cpu-...whl transformers==4.57.6 onnx onnxscript

Each model is built the way a user gets one: a `transformers` config (tiny sizes: hidden 48,
2 layers, 4 heads, vocab 256), random weights from a fixed seed (`torch.manual_seed`),
eval mode, then `torch.onnx.export` with torch's dynamo exporter (`dynamo=True`: the TorchScript
one cannot trace transformers' vmapped mask functions of GPT-2) at opset 18, its graph
optimisation on and its debug metadata stripped, twice: with static shapes (batch 2, sequence 8; ViT one 32x32 image of 3 channels, batch 2)
and with dynamic axes (`batch`, `sequence`; ViT `batch` only, the image size being fixed by
the patch embedding). The models:

- `bert`: `BertModel` (token ids, `token_type_ids`, `attention_mask` int64 inputs;
  outputs `last_hidden_state` and `pooler_output`);
- `gpt2`: `GPT2LMHeadModel` (token ids and an `attention_mask`; the causal mask is built in the
  graph; output `logits`, no key/value cache);
- `vit`: `ViTModel` (pixel values; outputs `last_hidden_state` and `pooler_output`).

Output is deterministic: the same seed, versions and exporter give byte-identical files.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import onnx
import torch
import transformers

ROOT = Path(__file__).resolve().parent.parent
OPSET = 18
SEED = 13
BATCH, SEQUENCE = 2, 8
VOCAB = 256


@dataclass(frozen=True)
class Spec:
    """One model: how to build it, its example inputs, and the names of inputs and outputs."""

    build: Callable[[], torch.nn.Module]
    example: Callable[[], tuple[torch.Tensor, ...]]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    dynamic_inputs: dict[str, dict[int, str]]
    dynamic_outputs: dict[str, dict[int, str]]


class _Outputs(torch.nn.Module):
    """The wrapped model's outputs as a tuple of the named fields (no key/value caches)."""

    def __init__(self, model: torch.nn.Module, fields: tuple[str, ...]):
        super().__init__()
        self.model, self.fields = model, fields

    def forward(self, *args: torch.Tensor) -> tuple[torch.Tensor, ...]:
        names = {
            transformers.BertModel: ("input_ids", "token_type_ids", "attention_mask"),
            transformers.GPT2LMHeadModel: ("input_ids", "attention_mask"),
            transformers.ViTModel: ("pixel_values",),
        }[type(self.model)]
        result = self.model(**dict(zip(names, args, strict=True)), return_dict=True)
        return tuple(result[f] for f in self.fields)


def _bert() -> torch.nn.Module:
    config = transformers.BertConfig(
        vocab_size=VOCAB,
        hidden_size=48,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=96,
        max_position_embeddings=64,
        type_vocab_size=2,
    )
    return _Outputs(transformers.BertModel(config), ("last_hidden_state", "pooler_output"))


def _gpt2() -> torch.nn.Module:
    config = transformers.GPT2Config(
        vocab_size=VOCAB, n_positions=64, n_embd=48, n_layer=2, n_head=4, use_cache=False
    )
    return _Outputs(transformers.GPT2LMHeadModel(config), ("logits",))


def _vit() -> torch.nn.Module:
    config = transformers.ViTConfig(
        hidden_size=48,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=96,
        image_size=32,
        patch_size=8,
        num_channels=3,
    )
    return _Outputs(transformers.ViTModel(config), ("last_hidden_state", "pooler_output"))


def _tokens() -> tuple[torch.Tensor, ...]:
    ids = torch.randint(0, VOCAB, (BATCH, SEQUENCE), dtype=torch.int64)
    mask = torch.ones(BATCH, SEQUENCE, dtype=torch.int64)
    mask[1, SEQUENCE - 3 :] = 0  # the second sequence is padded
    return ids, mask


def _bert_example() -> tuple[torch.Tensor, ...]:
    ids, mask = _tokens()
    types = torch.zeros(BATCH, SEQUENCE, dtype=torch.int64)
    types[:, SEQUENCE // 2 :] = 1
    return ids, types, mask


TOKENS = {0: "batch", 1: "sequence"}
SPECS = {
    "bert": Spec(
        _bert,
        _bert_example,
        ("input_ids", "token_type_ids", "attention_mask"),
        ("last_hidden_state", "pooler_output"),
        dict.fromkeys(("input_ids", "token_type_ids", "attention_mask"), TOKENS),
        {"last_hidden_state": TOKENS, "pooler_output": {0: "batch"}},
    ),
    "gpt2": Spec(
        _gpt2,
        _tokens,
        ("input_ids", "attention_mask"),
        ("logits",),
        dict.fromkeys(("input_ids", "attention_mask"), TOKENS),
        {"logits": TOKENS},
    ),
    "vit": Spec(
        _vit,
        lambda: (torch.randn(BATCH, 3, 32, 32),),
        ("pixel_values",),
        ("last_hidden_state", "pooler_output"),
        {"pixel_values": {0: "batch"}},
        {"last_hidden_state": {0: "batch"}, "pooler_output": {0: "batch"}},
    ),
}


def _dynamic_shapes(spec: Spec) -> tuple[tuple[dict[int, object], ...]]:
    """`torch.export` dimensions for the dynamic axes: one `Dim` per name, shared by inputs."""
    dims: dict[str, object] = {}
    per_input = tuple(
        {axis: dims.setdefault(n, torch.export.Dim(n, min=1, max=64)) for axis, n in axes.items()}
        for axes in (spec.dynamic_inputs[name] for name in spec.inputs)
    )
    return (per_input,)  # the wrapper's `forward(*args)` takes them as one tuple


def _strip_debug_info(proto: onnx.ModelProto) -> None:
    """Drop the exporter's per-node metadata (Python stack traces, FX node names: half of each
    file) and doc strings; the graph and its weights are untouched."""
    for node in proto.graph.node:
        del node.metadata_props[:]
        node.doc_string = ""
    for values in (proto.graph.input, proto.graph.output, proto.graph.value_info):
        for value in values:
            del value.metadata_props[:]
            value.doc_string = ""
    del proto.metadata_props[:]


def export(name: str, spec: Spec, dynamic: bool) -> onnx.ModelProto:
    """The model of `spec`, exported with static shapes or with its dynamic axes."""
    torch.manual_seed(SEED)
    model = spec.build().eval()
    example = spec.example()
    with torch.no_grad():
        program = torch.onnx.export(
            model,
            example,
            input_names=list(spec.inputs),
            output_names=list(spec.outputs),
            dynamic_shapes=_dynamic_shapes(spec) if dynamic else None,
            opset_version=OPSET,
            dynamo=True,
            optimize=True,
            verbose=False,
        )
    proto = program.model_proto
    _strip_debug_info(proto)
    proto.graph.name = f"{name}_{'dynamic' if dynamic else 'static'}"
    proto.producer_name = "bench/export_transformers.py"
    onnx.checker.check_model(proto, full_check=True)
    return proto


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "models")
    parser.add_argument("--only", default=",".join(SPECS), help="comma-separated model names")
    args = parser.parse_args()
    torch.use_deterministic_algorithms(True)
    args.out.mkdir(parents=True, exist_ok=True)
    total = 0
    for name in args.only.split(","):
        for dynamic in (False, True):
            proto = export(name, SPECS[name], dynamic)
            path = args.out / f"{name}_{'dynamic' if dynamic else 'static'}.onnx"
            onnx.save(proto, path)
            size = os.path.getsize(path)
            total += size
            print(
                f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}: "
                f"{size / 1024:.0f} KiB, {len(proto.graph.node)} nodes"
            )
    print(
        f"total {total / 1024:.0f} KiB (torch {torch.__version__}, "
        f"transformers {transformers.__version__})"
    )


if __name__ == "__main__":
    main()
