"""One graph edit on an ONNX model, in pure Python: look the int8 embedding rows up before widening them.

Why. The packaged model stores its weights as int8 plus a scale, each widened at run time by a
``Cast`` and a ``Mul``. onnxruntime's constant folding (which the model needs to run fast: without
it a query takes hundreds of milliseconds) widens every one of them once, at load, into float32.
For the word-embedding table that is 30,522 × 384 floats, **47 MB**, of which a query reads a few
dozen rows. Reordering that one path to ``Gather(int8 rows) → Cast → Mul(gathered row scales)``
gives bit-identical outputs (widening and scaling are element-wise, so they commute with picking
rows) and leaves nothing constant to fold: the session keeps the 11.7 MB int8 table instead,
about 33 MB less per session (measured: the query session of ``funes mcp`` and each indexing session).

How. ONNX files are protobuf. Only three messages are touched (the model's ``graph``, its
``node`` list, the nodes' input/output names), so this module reads and writes the protobuf
wire format directly rather than depending on the ``onnx`` package (16 MB, and an import on
every start). Every field it does not understand is copied byte for byte. When the pattern is
not found exactly (another model file), :func:`gather_first` returns ``None`` and the caller
loads the file unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

__all__ = ["gather_first"]

_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5

# Field numbers from onnx.proto (ModelProto, GraphProto, NodeProto, TensorProto).
_MODEL_GRAPH = 7
_GRAPH_NODE, _GRAPH_INITIALIZER = 1, 5
_NODE_INPUT, _NODE_OUTPUT, _NODE_NAME, _NODE_OP, _NODE_ATTRIBUTE = 1, 2, 3, 4, 5
_TENSOR_DIMS, _TENSOR_NAME = 1, 8


def _varint(buf: memoryview, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _fields(buf: memoryview) -> Iterator[tuple[int, int, int, int, int]]:
    """(field number, wire type, start of the field, start of its payload, end) for each field."""
    pos, end = 0, len(buf)
    while pos < end:
        start = pos
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == _VARINT:
            _, nxt = _varint(buf, pos)
            yield number, wire, start, pos, nxt
            pos = nxt
        elif wire == _LEN:
            length, payload = _varint(buf, pos)
            yield number, wire, start, payload, payload + length
            pos = payload + length
        elif wire == _I64:
            yield number, wire, start, pos, pos + 8
            pos += 8
        elif wire == _I32:
            yield number, wire, start, pos, pos + 4
            pos += 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")


def _len_field(number: int, payload: bytes) -> bytes:
    return _encode_varint(number << 3 | _LEN) + _encode_varint(len(payload)) + payload


@dataclass(slots=True)
class _Node:
    raw: bytes
    op: str = ""
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    attributes: list[bytes] = field(default_factory=list)


def _node(raw: bytes) -> _Node:
    node = _Node(raw)
    view = memoryview(raw)
    for number, wire, start, payload, end in _fields(view):
        if wire != _LEN:
            continue
        value = bytes(view[payload:end])
        if number == _NODE_INPUT:
            node.inputs.append(value.decode())
        elif number == _NODE_OUTPUT:
            node.outputs.append(value.decode())
        elif number == _NODE_OP:
            node.op = value.decode()
        elif number == _NODE_ATTRIBUTE:
            node.attributes.append(bytes(view[start:end]))
    return node


def _make_node(op: str, inputs: list[str], outputs: list[str], name: str, attributes: list[bytes]) -> bytes:
    out = b"".join(_len_field(_NODE_INPUT, i.encode()) for i in inputs)
    out += b"".join(_len_field(_NODE_OUTPUT, o.encode()) for o in outputs)
    out += _len_field(_NODE_NAME, name.encode()) + _len_field(_NODE_OP, op.encode())
    return out + b"".join(attributes)


def _tensor_dims(view: memoryview) -> tuple[str, list[int]]:
    name, dims = "", []
    for number, wire, _start, payload, end in _fields(view):
        if number == _TENSOR_NAME and wire == _LEN:
            name = bytes(view[payload:end]).decode()
        elif number == _TENSOR_DIMS and wire == _VARINT:
            dims.append(_varint(view, payload)[0])
        elif number == _TENSOR_DIMS and wire == _LEN:  # packed
            pos = payload
            while pos < end:
                value, pos = _varint(view, pos)
                dims.append(value)
    return name, dims


def _rewrite_graph(graph: memoryview) -> bytes | None:
    nodes: list[tuple[int, int, _Node]] = []
    dims: dict[str, list[int]] = {}
    for number, wire, start, payload, end in _fields(graph):
        if number == _GRAPH_NODE and wire == _LEN:
            nodes.append((start, end, _node(bytes(graph[payload:end]))))
        elif number == _GRAPH_INITIALIZER and wire == _LEN:
            name, shape = _tensor_dims(graph[payload:end])
            dims[name] = shape
    producer = {out: i for i, (_s, _e, n) in enumerate(nodes) for out in n.outputs}
    consumers: dict[str, int] = {}
    for _s, _e, n in nodes:
        for name in n.inputs:
            consumers[name] = consumers.get(name, 0) + 1
    replace: dict[int, bytes] = {}
    for gi, (_s, _e, gather) in enumerate(nodes):
        if gather.op != "Gather" or len(gather.inputs) != 2:
            continue
        mi = producer.get(gather.inputs[0])
        if mi is None or nodes[mi][2].op != "Mul" or len(nodes[mi][2].inputs) != 2:
            continue
        mul = nodes[mi][2]
        ci = producer.get(mul.inputs[0])
        if ci is None or nodes[ci][2].op != "Cast" or len(nodes[ci][2].inputs) != 1:
            continue
        cast = nodes[ci][2]
        table, scale = cast.inputs[0], mul.inputs[1]
        if table not in dims or scale not in dims or len(dims[table]) != 2:
            continue
        if consumers.get(cast.outputs[0]) != 1 or consumers.get(mul.outputs[0]) != 1:
            continue
        rows_scaled = dims[scale] == [dims[table][0], 1]
        if not rows_scaled and dims[scale] not in ([], [1]):
            continue
        index, result = gather.inputs[1], gather.outputs[0]
        # The new nodes read only initializers and the Gather's index, so they stand where the old
        # Cast stood: ONNX wants nodes in topological order, and that is early enough when the
        # index is a graph input or is made before the Cast.
        ii = producer.get(index)
        if ii is not None and ii > ci:
            continue
        tag = f"funes_gather_first/{result}"
        new = [
            _make_node("Gather", [table, index], [f"{tag}/q"], f"{tag}/gather", gather.attributes),
            _make_node("Cast", [f"{tag}/q"], [f"{tag}/f"], f"{tag}/cast", cast.attributes),
        ]
        if rows_scaled:
            new.append(_make_node("Gather", [scale, index], [f"{tag}/s"], f"{tag}/scale", gather.attributes))
            new.append(_make_node("Mul", [f"{tag}/f", f"{tag}/s"], [result], f"{tag}/mul", mul.attributes))
        else:
            new.append(_make_node("Mul", [f"{tag}/f", scale], [result], f"{tag}/mul", mul.attributes))
        replace[ci] = b"".join(_len_field(_GRAPH_NODE, n) for n in new)
        replace[mi] = b""
        replace[gi] = b""
    if not replace:
        return None
    out = bytearray()
    pos = 0
    for i, (start, end, _n) in enumerate(nodes):
        if i in replace:
            out += graph[pos:start]
            out += replace[i]
            pos = end
    out += graph[pos:]
    return bytes(out)


def gather_first(model: bytes) -> bytes | None:
    """``model`` with every ``Gather(Mul(Cast(int8 table), scale), index)`` reordered to gather first.

    Returns ``None`` when the model has no such path (nothing to gain; load the file as is).
    """
    view = memoryview(model)
    for number, wire, start, payload, end in _fields(view):
        if number == _MODEL_GRAPH and wire == _LEN:
            graph = _rewrite_graph(view[payload:end])
            if graph is None:
                return None
            return bytes(view[:start]) + _len_field(_MODEL_GRAPH, graph) + bytes(view[end:])
    return None
