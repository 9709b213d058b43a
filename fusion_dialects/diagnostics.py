"""Source locations and user-facing errors.

Every op parsed from a file carries a `loc("file":line:col)` location (`LocatedParser`); ops
created by passes inherit the location of the op they replace. Every stage of the compiler
reports a problem in the input as a `CompileError` naming the op; the tools print it as

    file:line:col: error: message
      %r = graph.add %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x3xf32>
      ^

and exit non-zero, without a Python traceback.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from xdsl.context import Context
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    Builtin,
    ComplexType,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    FileLineColLoc,
    IndexType,
    IntAttr,
    IntegerType,
    ModuleOp,
    RankedStructure,
    ShapedType,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Block, Operation
from xdsl.irdl import base
from xdsl.parser import Parser
from xdsl.parser.core import ForwardDeclaredValue, UnresolvedOperand
from xdsl.parser.generic_parser import ParserState
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException
from xdsl.utils.lexer import Input
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRTokenKind

from fusion_compiler.dialects.compile_error import CompileError as CompileError
from fusion_compiler.dialects.compile_error import SourcePosition as SourcePosition
from fusion_compiler.dialects.compile_error import op_position as op_position
from fusion_compiler.dialects.dominance import first_undominated_use

_DENSE_LITERAL_TYPE = base(
    RankedStructure[IntegerType | IndexType | AnyFloat | ComplexType]  # type: ignore[misc]
)
"""What xDSL's parser requires of a dense literal's type (its own expression, built once)."""

_DENSE_INTEGER_BITS = 64
"""The widest integers whose literals xDSL 0.75 can store: it packs elements with Python's
`struct`, and fails inside its parser on wider ones (`dense<1> : tensor<i94>`,
`array<i94: 1>`)."""

MAX_INTEGER_BITS = (1 << 24) - 1
"""The widest integer type, as in MLIR (`IntegerType::kMaxWidth`)."""

_INTEGER_TYPE = re.compile(r"[su]?i(\d+)")
"""The name of an integer type (`i32`, `ui8`, `si64`), its width."""

LARGE_SPLAT = 1 << 20
"""A splat literal of more elements is parsed to its one element (as the importer keeps a
splat); smaller ones as xDSL parses them (`LocatedParser.parse_dense_int_or_fp_elements_attr`)."""

_WIDE_ARRAY_HEAD = re.compile(r"array\s*<\s*[su]?i(\d+)\b")
"""The head of a dense array of integers (`array<i64: 1, 2>`, `array<ui8>`), its width."""


_STATIC_TENSOR_TYPE = re.compile(r"tensor<(?:\d+x)*(?:f16|bf16|f32|f64|i1|i8|i16|i32|i64)>")
"""The text of a static tensor type of a common element type, as xDSL prints it."""

_Parsed = TypeVar("_Parsed")

_FLAT_ATTRIBUTE_DICT = re.compile(r'\{[^{}"\n]*\}')
"""The text of an attribute dictionary on one line, without nested braces or strings (a
graph op's `{strides = array<i64: 2, 2>, groups = 1 : i64}`): its closing brace is the first
one after it opens."""

_DENSE_RESOURCE_HEAD = re.compile(r"dense_resource<([A-Za-z_][\w$.]*)>\s*:\s*")
"""`dense_resource<handle> :` with a bare handle, as the printer writes it; its type follows."""

_SHORT_DENSE_LITERAL = re.compile(r'dense<[^<>{}"\n]*>\s*:\s*tensor<[^<>\n]*>')
"""A `dense<...>` literal of a tensor type on one line, without nested brackets or strings (a
splat such as `dense<1.000000e+00> : tensor<64xf32>`, a short list of elements)."""


class _Lexer(MLIRLexer):
    """xDSL's lexer, its pattern of a string literal made possessive: xDSL 0.75 nests one
    repetition in another (`(?:[^"...]+|...)*`), which backtracks exponentially on a string
    left open on its line (`"graph.relu(%y) : ...` followed by a newline: minutes for 50
    characters). The same strings match: the two alternatives start with different characters
    and the closing quote matches neither, so no match needs to give characters back."""

    _unescaped_characters_regex = re.compile(r'"(?:[^"\\\n\v\f]++|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+"')


class _FloatBits(Parser._TensorLiteralElement):
    """A dense literal's element written in hexadecimal: in a float type, its bits."""

    def to_type(self, parser, type):  # noqa: A002 - xDSL's name
        if not isinstance(type, AnyFloat):
            return super().to_type(parser, type)
        layout = _FLOAT_LAYOUTS.get(type.name)
        bits = self.value
        if layout is None or self.is_negative or not isinstance(bits, int):
            parser.raise_error(f"a hexadecimal literal cannot be read as {type}", self.span)
        if bits >= 1 << (8 * struct.calcsize(layout)):
            parser.raise_error(
                f"the hexadecimal literal {hex(bits)} does not fit {type}", self.span
            )
        return struct.unpack(layout, bits.to_bytes(struct.calcsize(layout), "little"))[0]


_FLOAT_LAYOUTS = {"f16": "<e", "f32": "<f", "f64": "<d"}
"""The `struct` layouts of the float types whose bits a hexadecimal literal gives."""


class LocatedParser(Parser):
    """A parser that records, on every op without an explicit `loc(...)`, where it starts.

    `line_offset` is the number of lines before this text in its file (for
    `--split-input-file` chunks), so that positions are those of the whole file.
    """

    def __init__(self, ctx: Context, text: str, name: str, line_offset: int = 0):
        super().__init__(ctx, "", name)
        self._parser_state = ParserState(_Lexer(Input(text, name)))  # (lexes the first token)
        self._filename = StringAttr(name)
        self._line_offset = line_offset
        self._text = text
        self._counted = (0, 1)
        """(offset, line) of the last op start located: they come in increasing order, so
        each newline is counted once (xDSL's `Span.get_location` counts from the start of
        the text every time: quadratic in the size of the file)."""
        self.op_start = 0
        """Where the op being parsed starts (an offset in the text)."""
        self._tensor_types: dict[str, Attribute] = {}
        """Static tensor types parsed so far, by their text (`parse_optional_type`)."""
        self._dense_literals: dict[str, Attribute] = {}
        """Short dense literals parsed so far, by their text (`parse_optional_attribute`)."""
        self._attribute_dicts: dict[str, dict[str, Attribute]] = {}
        """Flat attribute dictionaries parsed so far, by their text
        (`parse_optional_attr_dict`)."""
        self._forward_uses: dict[ForwardDeclaredValue[Attribute], UnresolvedOperand] = {}
        """Each value used before its definition, and where it was first used
        (`resolve_operand`)."""

    def _line_and_column(self, offset: int) -> tuple[int, int]:
        counted_to, line = self._counted
        if offset < counted_to:
            counted_to, line = 0, 1
        line += self._text.count("\n", counted_to, offset)
        self._counted = (offset, line)
        return line, offset - (self._text.rfind("\n", 0, offset) + 1) + 1

    def parse_optional_type(self):
        """xDSL's, but a static tensor type whose text was parsed before in this file is the
        same type again: it is read off the text and skipped (a model's IR spells the same
        few dozen types thousands of times; densenet121 0.66 -> 0.47 s, medians of four
        alternating runs in one process). An integer type wider than MLIR allows is an error
        at its name (xDSL 0.75 takes any width, and fails computing the range of a value of
        `i6418446744073709551616`)."""
        token = self._current_token
        if token.kind == MLIRTokenKind.BARE_IDENT:
            if token.text == "tensor":
                return self._spelled_before(
                    _STATIC_TENSOR_TYPE, self._tensor_types, super().parse_optional_type
                )
            width = _INTEGER_TYPE.fullmatch(token.text)
            if width is not None and int(width.group(1)) > MAX_INTEGER_BITS:
                self.raise_error(
                    f"integer types are at most {MAX_INTEGER_BITS} bits wide (as in MLIR)"
                )
        return super().parse_optional_type()

    def _spelled_before(
        self,
        spelling: re.Pattern[str],
        kept: dict[str, _Parsed],
        parse: Callable[[], _Parsed | None],
        copy: Callable[[_Parsed], _Parsed] = lambda parsed: parsed,
    ) -> _Parsed | None:
        """`parse()` at the current token; but when the text there matches `spelling` and the
        same text was parsed before in this file, (a `copy` of) its result then, the text
        skipped. A result is kept only when xDSL read exactly the matched text (blanks
        aside)."""
        match = spelling.match(self._text, self._current_token.span.start)
        if match is None:
            return parse()
        known = kept.get(match.group())
        if known is not None:
            self._resume_from(match.end())
            return copy(known)
        parsed = parse()
        read = self._text[match.end() : self.pos]
        if parsed is not None and self.pos >= match.end() and not read.strip():
            kept[match.group()] = copy(parsed)
        return parsed

    def parse_optional_attribute(self) -> Attribute | None:
        """xDSL's, with the two spellings of a model's constants read faster: a short dense
        literal (`_SHORT_DENSE_LITERAL`: the batch norms' splats) whose text was parsed
        before in this file is the same attribute again, and `dense_resource<handle> : type`
        is read off the text, its handle declared as xDSL declares it (densenet121's 844
        handles took a sixth of its parse through xDSL's token by token reading)."""
        token = self._current_token
        if token.kind == MLIRTokenKind.BARE_IDENT:
            if token.text == "dense":
                return self._spelled_before(
                    _SHORT_DENSE_LITERAL, self._dense_literals, self._parse_storing_elements
                )
            if token.text == "dense_resource":
                match = _DENSE_RESOURCE_HEAD.match(self._text, token.span.start)
                if match is not None:
                    return self._dense_resource(match)
            if token.text == "array":
                self._check_array_elements(token.span.start)
                return self._parse_storing_elements()
        return super().parse_optional_attribute()

    def _parse_storing_elements(self) -> Attribute | None:
        """xDSL's parse of a `dense<...>` or `array<...>` attribute, whose elements it packs
        as it reads them: a value out of its element type's range (`dense<300> : tensor<i8>`,
        `dense<1.0e39> : tensor<f32>`) is an error at the attribute, not xDSL's `ValueError` or
        `OverflowError`."""
        start = self._current_token.span.start
        try:
            return super().parse_optional_attribute()
        except ValueError as err:  # (xDSL's message names the value, the type and its range)
            self.raise_error(str(err), start, self.pos)
        except OverflowError:
            self.raise_error(
                "a value of this attribute is out of its element type's range", start, self.pos
            )

    def _check_array_elements(self, start: int) -> None:
        """An error at an `array<iN: ...>` whose integers xDSL cannot store (wider than 64
        bits: it fails inside its parser)."""
        match = _WIDE_ARRAY_HEAD.match(self._text, start)
        if match is not None and int(match.group(1)) > _DENSE_INTEGER_BITS:
            self.raise_error(
                f"an array of i{match.group(1)} elements is not supported: its integers can be "
                f"at most {_DENSE_INTEGER_BITS} bits wide",
                match.start(1) - 1,
                match.end(1),
            )

    def _dense_resource(self, head: re.Match[str]) -> DenseResourceAttr:
        """The `dense_resource` attribute whose text starts with `head`, as xDSL's
        `_parse_builtin_dense_resource_attr` makes it."""
        key = head.group(1)
        if ("builtin", key) not in self.dialect_resources:
            interface = Builtin.get_interface(OpAsmDialectInterface)
            assert interface is not None
            key = interface.declare_resource(key)
            self.dialect_resources.add(("builtin", key))
        self._resume_from(head.end())
        typ = self.parse_type()
        if not isinstance(typ, ShapedType):
            self.raise_error(f"dense resource should have a shaped type, got: {typ}")
        return DenseResourceAttr.from_params(key, typ)

    def parse_optional_attr_dict(self) -> dict[str, Attribute]:
        """xDSL's, but a flat attribute dictionary (`_FLAT_ATTRIBUTE_DICT`) whose text was
        parsed before in this file holds the same attributes again: a copy of them is
        returned and the text skipped (a model's convolutions and batch norms repeat a few
        dictionaries hundreds of times, and lexing them was a quarter of the parse)."""
        if self._current_token.kind == MLIRTokenKind.L_BRACE:
            parsed = self._spelled_before(
                _FLAT_ATTRIBUTE_DICT, self._attribute_dicts, super().parse_optional_attr_dict, dict
            )
            return {} if parsed is None else parsed
        return super().parse_optional_attr_dict()

    def parse_dense_int_or_fp_elements_attr(self, type=None):  # noqa: A002 - xDSL's name
        """xDSL's, but a splat (`dense<1.0> : tensor<...>`) of more than `LARGE_SPLAT`
        elements keeps its one value, as the importer keeps a splat (`values.dense_f32`):
        xDSL repeats the value in a Python list of every element, and `tensor<2147483648xf32>`
        took 24 GB, which ended fusion-opt by the kernel's OOM killer, without a message."""
        start = self._current_token.span.start
        large = type is None and self._is_large_splat()
        self._resume_from(start)
        if not large:
            return super().parse_dense_int_or_fp_elements_attr(type)
        self.parse_punctuation("<")
        (element,), _ = self._parse_tensor_literal()
        self.parse_punctuation(">")
        self.parse_punctuation(":")
        literal_type = self._parse_dense_literal_type()
        element_type = literal_type.element_type
        value = element.to_type(self, element_type)
        # (packed as xDSL packs a splat's elements, `true` in i1 all ones; a value out of
        # range is `_parse_storing_elements`'s error)
        one = DenseIntOrFPElementsAttr.from_list(TensorType(element_type, []), [value])
        return DenseIntOrFPElementsAttr(literal_type, one.data)

    def _parse_tensor_literal_element(self):
        """xDSL's, but an integer written in hexadecimal is a float element's bits, as MLIR
        reads it and as xDSL prints a float that has no decimal spelling: xDSL 0.75 prints
        -inf in a dense literal as `0xff800000` and read it back as the integer 4286578688
        made a float, so a module written by `fusion-import` with a -inf constant (the
        padding of a dilated max pool) computed 4.3e9 there (found by `bench/fuzz.py
        onnx-graphs`, seed 54720)."""
        token = self._current_token
        element = super()._parse_tensor_literal_element()
        if token.kind == MLIRTokenKind.INTEGER_LIT and token.text[:2].lower() == "0x":
            return _FloatBits(element.is_negative, element.value, element.span)
        return element

    def _is_large_splat(self) -> bool:
        """Whether a dense literal of one int or float value, whose tensor type has more than
        `LARGE_SPLAT` elements, follows (the position is left after its type)."""
        if self.parse_optional_punctuation("<") is None or self._current_token.kind not in (
            MLIRTokenKind.INTEGER_LIT,
            MLIRTokenKind.FLOAT_LIT,
            MLIRTokenKind.MINUS,
            MLIRTokenKind.BARE_IDENT,  # (true, false)
        ):
            return False
        self._parse_tensor_literal_element()
        if self.parse_optional_punctuation(">") is None:
            return False
        if self.parse_optional_punctuation(":") is None:
            return False
        typ = self.parse_optional_type()
        if not isinstance(typ, TensorType) or not isinstance(
            typ.element_type, IntegerType | AnyFloat
        ):
            return False
        shape = typ.get_shape()
        return DYNAMIC_INDEX not in shape and math.prod(shape) > LARGE_SPLAT

    def _parse_dense_literal_type(self):
        """The type of a `dense<...>` literal, checked as xDSL checks it, against a constraint
        built once: xDSL 0.75 builds it anew for every literal, which was half the time of
        parsing a model (densenet121: 1.0-1.1 s, 0.46-0.50 s with it built once; two runs
        each in one process); and one xDSL cannot store is an error at the type."""
        start = self._current_token.span.start
        typ = self.expect(self.parse_optional_type, "Dense attribute must be typed!")
        if not _DENSE_LITERAL_TYPE.verifies(typ):
            self.raise_error(
                "Expected memref, vector or tensor type of integer, index, float, or complex type"
            )
        element = typ.get_element_type()
        if isinstance(element, IntegerType) and element.width.data > _DENSE_INTEGER_BITS:
            self.raise_error(
                f"a dense literal of {element} elements is not supported: its integers can be "
                f"at most {_DENSE_INTEGER_BITS} bits wide",
                start,
                self._current_token.span.start,
            )
        if any(dim == DYNAMIC_INDEX for dim in typ.get_shape()):
            self.raise_error("Dense literal attribute should have a static shape.")
        return typ

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        """The module of the text; an empty one for a text of only comments and blanks (as
        in MLIR)."""
        if allow_implicit_module and self._current_token.kind == MLIRTokenKind.EOF:
            return ModuleOp([])
        module = super().parse_module(allow_implicit_module)
        if self._forward_uses:
            self._check_forward_uses(module)
        return module

    def resolve_operand(self, operand: UnresolvedOperand, type: Attribute):
        """xDSL's; a value used before its definition is remembered with that use."""
        value = super().resolve_operand(operand, type)
        if isinstance(value, ForwardDeclaredValue):
            self._forward_uses.setdefault(value, operand)
        return value

    def _check_forward_uses(self, module: ModuleOp) -> None:
        """An error at the first use of a value whose definition came too early to replace
        it. xDSL replaces a value used before its definition when the definition is parsed;
        but an op's operands are used only once its regions are parsed, so a value an op uses
        and defines in its own region (`loop.for %i = %c0 to %n ... { %n = ... }`) is left
        a placeholder, which xDSL 0.75 neither reports nor can verify."""
        for op in module.walk():
            for value in op.operands:
                if isinstance(value, ForwardDeclaredValue) and value in self._forward_uses:
                    use = self._forward_uses[value]
                    self.raise_error(
                        f"value {use.span.text} is used before its definition, which is inside "
                        f"a region of '{op.name}' and not visible where it is used",
                        use.span,
                    )

    def _parse_block(self) -> Block:
        """xDSL's, but a label xDSL cannot keep as a block's name (`^0`, `^9x`: it sets the
        name unchecked, a `ValueError`) is an error at the label."""
        token = self._current_token
        if token.kind == MLIRTokenKind.CARET_IDENT and not Block.is_valid_name(token.text[1:]):
            self.raise_error(
                f"block label {token.text}: a label must start with a letter, '_', '$', '.' or "
                "'-' (as ^bb0)",
                token.span,
            )
        return super()._parse_block()

    def parse_operation(self) -> Operation:
        start = self._current_token.span.start
        self.op_start = start
        line, column = self._line_and_column(start)
        try:
            op = super().parse_operation()
        except VerifyException as err:  # a custom format's type or property constraint
            self.raise_error(str(err), start, self._current_token.span.start)
        if not isinstance(op.location, FileLineColLoc):
            op.location = FileLineColLoc(
                self._filename, IntAttr(line + self._line_offset), IntAttr(column)
            )
        return op


def parse_source(
    ctx: Context,
    text: str,
    filename: str,
    line_offset: int = 0,
    read_files: list[Path] | None = None,
) -> ModuleOp:
    """Parse `text` (from `filename`), raising `CompileError` at the position of a syntax error;
    `dense_resource` constants are resolved to their blobs (`fusion_compiler.dialects.resources`),
    and the weights file read for them is appended to `read_files` when given."""
    from fusion_compiler.collector import collector_paused
    from fusion_compiler.dialects.resources import isolated_resources, resolve_resources

    parser: LocatedParser | None = None
    try:
        parser = LocatedParser(ctx, text, filename, line_offset)  # (lexes the first token)
        with isolated_resources() as in_file_blobs, collector_paused():
            module = parser.parse_module()
        weights = resolve_resources(module, filename, in_file_blobs)
        if weights is not None and read_files is not None:
            read_files.append(weights)
        return module
    except MemoryError:  # e.g. a splat xDSL expands to a tensor of 2^32 elements
        at = getattr(parser, "op_start", 0)  # the op being parsed
        line = text.count("\n", 0, at) + 1
        column = at - (text.rfind("\n", 0, at) + 1) + 1
        raise CompileError(
            "out of memory while parsing this op: a value of it needs more memory than this "
            "machine can allocate",
            position=SourcePosition(filename, line + line_offset, column),
        ) from None
    except ParseError as err:
        where = err.span.get_location()
        position = SourcePosition(filename, where.line + line_offset, where.col)
        raise CompileError(_parse_message(err, text), position=position) from None
    except VerifyException as err:  # an op built while parsing (a type of the wrong kind)
        assert parser is not None  # (building the parser verifies nothing)
        end = len(text[: parser.pos].rstrip())  # the last character of the op's type
        line_start = text.rfind("\n", 0, end) + 1
        line, column = (
            text.count("\n", 0, end) + 1,
            text[line_start:end].find(text[line_start:end].strip()) + 1,
        )
        position = SourcePosition(filename, line + line_offset, column)
        raise CompileError(_one_line(err), position=position) from None


_OPEN_STRING = "End of file reached before closing string literal."
"""xDSL's message for a string literal without its closing quote, wherever the line ends."""


def _parse_message(err: ParseError, text: str) -> str:
    """xDSL's message, completed where it lost its subject (at the end of the input), or made
    true (a string literal ends at the end of its line, not only of the file)."""
    message = err.msg.strip()
    if message == _OPEN_STRING:
        return "string literal not closed on its line (a '\"' is missing)"
    if err.span.start >= len(text.rstrip()):
        return f"unexpected end of input ({message})" if message else "unexpected end of input"
    return message


def _ops_in_order(module: ModuleOp) -> Iterator[Operation]:
    yield from module.walk()


def verify_module(module: ModuleOp) -> None:
    """Verify every op, then SSA dominance (`dominance`), raising a `CompileError` at the
    first op that does not verify; a function's body must besides be one block that returns
    (`_check_function_body`), and no module be nested in another (the passes read a module's
    ops as its functions)."""
    functions: list[func.FuncOp] = []
    for op in _ops_in_order(module):
        try:
            op.verify(verify_nested_ops=False)
        except Exception as err:
            if not _is_verifier_message(err):
                raise
            message = _one_line(err)
            if not message.startswith(op.name):
                message = f"{op.name}: {message}"
            raise CompileError(message, op) from None
        if isinstance(op, func.FuncOp):
            functions.append(op)
        elif isinstance(op, ModuleOp) and op is not module:
            raise CompileError(
                "builtin.module inside a module: the compiler takes one module (ops written "
                "outside a file's module are put with it into another)",
                op,
            )
    for function in functions:  # (after the ops: an op's own error is the more precise)
        _check_function_body(function)
    undominated = first_undominated_use(module)
    if undominated is not None:
        op, index = undominated
        raise CompileError(f"{op.name}: operand #{index} does not dominate this use", op)


def _check_function_body(function: func.FuncOp) -> None:
    """A function's body (a declaration has none) is one block ending in `func.return`: the
    compiler has no branch ops, and xDSL's verifier lets both an empty body and a second
    block (`^bb1:` after the return) through, which the passes read as one block that
    returns."""
    blocks = function.body.blocks
    name = function.sym_name.data
    if len(blocks) > 1:
        raise CompileError(
            f"func.func: @{name} has {len(blocks)} blocks; a function is one block (there are "
            "no branches)",
            function,
        )
    first = blocks.first
    if first is not None and not isinstance(first.last_op, func.ReturnOp):
        raise CompileError(f"func.func: @{name} does not end with func.return", function)


def _is_verifier_message(err: Exception) -> bool:
    """Whether `err`, raised by an op's verifier, reports the op as invalid: a
    `VerifyException` or `DiagnosticException`, or a bare `Exception`, which some of xDSL
    0.75's verifiers raise instead (`memref.load` with the wrong number of indices). Any
    other exception is a bug in a verifier, left to surface as one."""
    return isinstance(err, (VerifyException, DiagnosticException)) or type(err) is Exception


def _one_line(err: Exception) -> str:
    """The verifier's message on one line (xDSL puts the reason of a constraint failure on
    the lines after the first)."""
    text = str(err.args[0]) if err.args else str(err)
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return " ".join(lines) if lines else type(err).__name__
