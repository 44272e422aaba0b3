"""The BERT encoder of :mod:`stillweb.corpora.search.dense_model` as an ONNX graph (opset 17 plus
ONNX Runtime's ``com.microsoft`` ``MatMulNBits`` and ``Gelu``).

One text at a time, no padding: the input is its summed embeddings (tokens x hidden), the output the
mean of the last layer's hidden states (hidden). Each layer is the post-norm BERT layer (Devlin et al.
2019): multi-head self-attention, add and layer norm, a GELU feed-forward block, add and layer norm.
Every weight matrix is a ``MatMulNBits`` over the model file's own 4-bit blocks (llama.cpp's Q4_0:
``w = d * (q - 8)``, which is ``MatMulNBits``' default zero point of 8), so the weights are exactly
those the package ships.
"""

from __future__ import annotations

import numpy as np

__all__ = ["encoder_graph", "repack_q4_0"]

_MS = "com.microsoft"


def repack_q4_0(blocks: np.ndarray, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Q4_0 blocks (``d``, ``qs``: byte j holds weight j low and j + 16 high) as ``MatMulNBits``' inputs:
    ``(uint8 [rows, blocks per row, 16]`` with weight 2j low and 2j + 1 high, ``float32 scales)``."""
    quants = blocks["qs"]
    nibbles = np.concatenate([quants & 0x0F, quants >> 4], axis=1)  # weights 0..31 of each block
    packed = (nibbles[:, 0::2] | (nibbles[:, 1::2] << 4)).astype(np.uint8)
    return packed.reshape(rows, -1, 16), blocks["d"].astype(np.float32)


def encoder_graph(layout, tensor):
    """The ONNX model of the encoder described by ``layout`` (a ``dense_model._Layout``), reading
    tensors by name through ``tensor(name)`` (float32 arrays or Q4_0 block arrays)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    hidden, heads = layout.hidden, layout.heads
    head = hidden // heads
    nodes, weights = [], []

    def constant(name, array):
        weights.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def node(op, inputs, output, domain="", **attributes):
        nodes.append(helper.make_node(op, inputs, [output], domain=domain, **attributes))
        return output

    def linear(x, prefix, rows, columns):
        packed, scales = repack_q4_0(tensor(f"{prefix}.w"), rows)
        product = node("MatMulNBits", [x, constant(f"{prefix}.w", packed), constant(f"{prefix}.s", scales)],
                       f"{prefix}.mm", _MS, K=columns, N=rows, bits=4, block_size=32, accuracy_level=4)
        return node("Add", [product, constant(f"{prefix}.b", tensor(f"{prefix}.b"))], f"{prefix}.out")

    def layer_norm(x, prefix, name):
        return node("LayerNormalization", [x, constant(f"{prefix}.w", tensor(f"{prefix}.w")),
                                           constant(f"{prefix}.b", tensor(f"{prefix}.b"))], name,
                    axis=-1, epsilon=layout.eps)

    split_shape = constant("split_shape", np.array([-1, heads, head], dtype=np.int64))
    merge_shape = constant("merge_shape", np.array([-1, hidden], dtype=np.int64))
    scale = constant("scale", np.array(1.0 / np.sqrt(head), dtype=np.float32))
    x = layer_norm("embeddings", "emb.ln", "h.-1")
    for index in range(layout.layers):
        p = f"l{index}"
        q, k, v = (node("Reshape", [linear(x, f"{p}.{n}", hidden, hidden), split_shape], f"{p}.{n}.heads")
                   for n in "qkv")
        q = node("Transpose", [q], f"{p}.qt", perm=[1, 0, 2])
        k = node("Transpose", [k], f"{p}.kt", perm=[1, 2, 0])
        v = node("Transpose", [v], f"{p}.vt", perm=[1, 0, 2])
        scores = node("Mul", [node("MatMul", [q, k], f"{p}.qk"), scale], f"{p}.scores")
        context = node("MatMul", [node("Softmax", [scores], f"{p}.probs", axis=-1), v], f"{p}.ctx")
        merged = node("Reshape", [node("Transpose", [context], f"{p}.ctxt", perm=[1, 0, 2]), merge_shape],
                      f"{p}.merged")
        attended = node("Add", [linear(merged, f"{p}.ao", hidden, hidden), x], f"{p}.res1")
        x = layer_norm(attended, f"{p}.aln", f"{p}.h1")
        inner = node("Gelu", [linear(x, f"{p}.fi", layout.ffn, hidden)], f"{p}.gelu", _MS)
        x = layer_norm(node("Add", [linear(inner, f"{p}.fo", hidden, layout.ffn), x], f"{p}.res2"),
                       f"{p}.oln", f"h.{index}")
    node("ReduceMean", [x, constant("axes", np.array([0], dtype=np.int64))], "pooled", keepdims=0)
    graph = helper.make_graph(
        nodes, "multilingual-e5-small-q4",
        [helper.make_tensor_value_info("embeddings", TensorProto.FLOAT, ["tokens", hidden])],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, [hidden])], weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid(_MS, 1)])
    model.ir_version = 8
    return model
