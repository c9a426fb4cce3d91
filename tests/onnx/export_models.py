#!/usr/bin/python3
"""Writes the ONNX files the ONNX tests read (tests/onnx/models/), with Debian's
python3-torch 1.13 and python3-onnx 1.12:

    /usr/bin/python3 tests/onnx/export_models.py [OUT_DIR]

The outputs are committed, so the tests never need torch. Fixed seeds and small
widths keep each file far below 1 MB. Next to the models, params.json records
PyTorch's own parameter count (sum of p.numel()) of every exported module, and
reference.json each module's output in eval mode on splitscope's own input
(seed 0, ir/params.cpp's input_value), which the cpu backend must reproduce
from the file's weights. The CNN's batch norms get running statistics other
than a fresh layer's, and the GRU's recurrent new-gate bias (b_hn) is zeroed,
since splitscope's GRU has one bias outside the reset gate (gru-recurrent-bias
keeps PyTorch's, for the note that says so).

Besides the PyTorch exports, a few files are written with onnx.helper: the
ops PyTorch removes in eval mode (Identity, Dropout), a Reshape / Unsqueeze /
Squeeze chain, and the bad files the error tests feed in (truncated, not
ONNX, an old opset, missing external weights, a dilated convolution, an op
splitscope does not cover, the GPT with an attention scale other than 1/sqrt(d)
or a mask that is not causal).
"""

import json
import math
import os
import sys

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper
from torch import nn


class MatMulAdd(nn.Module):
    """x @ W + b written out, so that the export is MatMul then Add (not Gemm)."""

    def __init__(self, inputs, outputs):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(inputs, outputs) * 0.1)
        self.bias = nn.Parameter(torch.randn(outputs) * 0.1)

    def forward(self, x):
        return torch.matmul(x, self.weight) + self.bias


class Mlp(nn.Module):
    """Gemm, LayerNormalization (opset 17), MatMul + Add, the three activations, Softmax."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.norm = nn.LayerNorm(64)
        self.fc2 = MatMulAdd(64, 48)
        self.fc3 = nn.Linear(48, 24)
        self.fc4 = nn.Linear(24, 10)

    def forward(self, x):
        x = torch.relu(self.norm(self.fc1(x)))
        x = torch.sigmoid(self.fc2(x))
        x = torch.tanh(self.fc3(x))
        return torch.softmax(self.fc4(x), dim=1)


class Cnn(nn.Module):
    """Conv (padding, stride, groups, no bias), BatchNormalization, MaxPool,
    AveragePool, GlobalAveragePool, and a flatten written as x.view(N, -1) so
    that the dynamic batch leaves Shape arithmetic in the graph."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.pool1 = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=2, padding=1, groups=2, bias=False)
        self.bn2 = nn.BatchNorm2d(16)
        self.pool2 = nn.AvgPool2d(2)
        self.conv3 = nn.Conv2d(16, 16, 1)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = self.pool1(torch.relu(self.bn1(self.conv1(x))))
        x = self.pool2(torch.relu(self.bn2(self.conv2(x))))
        x = self.gap(torch.relu(self.conv3(x)))
        return self.fc(x.view(x.size(0), -1))


class Residual(nn.Module):
    """A basic block: two convolutions joined to their input by Add, then
    global pooling, torch.flatten and a dense head."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(4, 4, 3, padding=1)
        self.conv2 = nn.Conv2d(4, 4, 3, padding=1)
        self.fc = nn.Linear(4, 10)

    def forward(self, x):
        y = self.conv2(torch.relu(self.conv1(x)))
        y = torch.relu(y + x)
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(y, 1), 1))


class TwoTower(nn.Module):
    """Two inputs, one convolution tower each, Concat on channels."""

    def __init__(self):
        super().__init__()
        self.left = nn.Conv2d(3, 6, 3, padding=1)
        self.right = nn.Conv2d(3, 10, 3, padding=1)
        self.fc = nn.Linear(16 * 4 * 4, 10)

    def forward(self, left, right):
        a = nn.functional.max_pool2d(torch.relu(self.left(left)), 2)
        b = nn.functional.max_pool2d(torch.relu(self.right(right)), 2)
        return self.fc(torch.flatten(torch.cat([a, b], dim=1), 1))


class Recurrent(nn.Module):
    """A two-layer LSTM or GRU (batch first), its last step, a dense head."""

    def __init__(self, cell):
        super().__init__()
        self.rnn = cell(8, 16, num_layers=2, batch_first=True)
        self.fc = nn.Linear(16, 4)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.fc(out[:, -1, :])


class CausalSelfAttention(nn.Module):
    """Attention written the plain way: one Linear for Q|K|V and a split (or
    three Linears, `separate`), heads by view/transpose, q @ k^T scaled, the
    causal mask by masked_fill, softmax, @ v, heads joined back, an output
    Linear."""

    def __init__(self, width, heads, positions, separate=False, mask="where"):
        super().__init__()
        self.heads = heads
        self.mask_form = mask  # "where" (masked_fill), "add" (scores + a 0 / -1e9 matrix) or "none" (an encoder)
        if separate:
            self.q, self.k, self.v = nn.Linear(width, width), nn.Linear(width, width), nn.Linear(width, width)
        else:
            self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.register_buffer("mask", torch.tril(torch.ones(positions, positions)).view(1, 1, positions, positions))
        if mask == "add":
            self.register_buffer("additive", torch.triu(torch.full((positions, positions), -1e9), diagonal=1))

    def forward(self, x):
        b, t, c = x.shape
        if hasattr(self, "qkv"):
            q, k, v = self.qkv(x).split(c, dim=2)
        else:
            q, k, v = self.q(x), self.k(x), self.v(x)
        d = c // self.heads
        q = q.view(b, t, self.heads, d).transpose(1, 2)
        k = k.view(b, t, self.heads, d).transpose(1, 2)
        v = v.view(b, t, self.heads, d).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d))
        if self.mask_form == "where":
            scores = scores.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))
        elif self.mask_form == "add":
            scores = scores + self.additive[:t, :t]
        y = torch.softmax(scores, dim=-1) @ v
        return self.proj(y.transpose(1, 2).contiguous().view(b, t, c))


class GptBlock(nn.Module):
    """Pre-LN: x + attn(ln_1(x)), then x + fc_proj(gelu(fc(ln_2(x))))."""

    def __init__(self, width, heads, positions, separate_qkv=False, mask="where"):
        super().__init__()
        self.ln_1 = nn.LayerNorm(width)
        self.attn = CausalSelfAttention(width, heads, positions, separate_qkv, mask)
        self.ln_2 = nn.LayerNorm(width)
        self.fc = nn.Linear(width, 4 * width)
        self.fc_proj = nn.Linear(4 * width, width)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.fc_proj(nn.functional.gelu(self.fc(self.ln_2(x))))


class Gpt(nn.Module):
    """A 2-block GPT: token and learned position embeddings, pre-LN blocks of
    2 causal heads, a final LayerNorm, an LM head without bias."""

    VOCAB = 50

    def __init__(self, vocab=VOCAB, positions=8, width=16, heads=2, blocks=2, separate_qkv=False, mask="where",
                 fresh_norms=False):
        super().__init__()
        self.wte = nn.Embedding(vocab, width)
        self.wpe = nn.Embedding(positions, width)
        self.blocks = nn.ModuleList(GptBlock(width, heads, positions, separate_qkv, mask) for _ in range(blocks))
        self.ln_f = nn.LayerNorm(width)
        self.lm_head = nn.Linear(width, vocab, bias=False)
        with torch.no_grad():
            # Gains and shifts other than a fresh layer's 1 and 0, so that the test sees them (and the exporter
            # keeps one initializer per layer norm rather than one shared).
            for module in self.modules():
                if isinstance(module, nn.LayerNorm) and not fresh_norms:
                    module.weight.uniform_(0.5, 1.5)
                    module.bias.uniform_(-0.5, 0.5)

    def forward(self, ids):
        t = ids.shape[1]
        x = self.wte(ids) + self.wpe(torch.arange(t, device=ids.device))
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.ln_f(x))


MASK64 = (1 << 64) - 1


def splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def splitscope_input(shape, input_index=0, seed=0):
    """ir/params.cpp's input_value(seed, element, input) for every element of [batch, ...]."""
    stream = splitmix64((splitmix64(seed) + ((((-1 - input_index) + 1) & MASK64) << 8) + 0xFF) & MASK64)
    count = int(np.prod(shape))
    values = np.empty(count, dtype=np.float32)
    for element in range(count):
        bits = splitmix64(stream ^ splitmix64(element))
        values[element] = np.float32((bits >> 40) * (2.0 / 16777216.0) - 1.0)
    return torch.from_numpy(values.reshape(shape))


def splitscope_tokens(shape, vocab, input_index=0, seed=0):
    """ir/params.cpp's network_input_value: input_value's draw u as token id floor((u + 1) / 2 * vocab)."""
    values = splitscope_input(shape, input_index, seed).numpy().astype(np.float64)
    ids = np.minimum(((values + 1.0) * 0.5 * vocab).astype(np.int64), vocab - 1)
    return torch.from_numpy(ids)


def reference_output(module, path, args, vocab=None):
    """The module's eval-mode output on splitscope's input, with the weights the file holds (a training-mode
    export's forward pass moves the batch norms' running statistics after the file is written)."""
    model = onnx.load(path)
    state = module.state_dict()
    for tensor in model.graph.initializer:
        if tensor.name in state:
            state[tensor.name] = torch.from_numpy(numpy_helper.to_array(tensor).copy())
    module.load_state_dict(state)
    module.eval()
    inputs = [splitscope_tokens(tuple(arg.shape), vocab, i) if vocab else splitscope_input(tuple(arg.shape), i)
              for i, arg in enumerate(args)]
    with torch.no_grad():
        out = module(*inputs)
    return {"batch": int(args[0].shape[0]), "shape": list(out.shape),
            "output": [float(v) for v in out.numpy().reshape(-1)]}


def export(module, name, args, out_dir, opset, params, input_names, dynamic_batch=False, training=False,
           references=None, vocab=None):
    module.train(training)
    path = os.path.join(out_dir, name + ".onnx")
    dynamic_axes = {n: {0: "batch"} for n in input_names} if dynamic_batch else None
    torch.onnx.export(module, args, path, opset_version=opset, input_names=input_names, output_names=["output"],
                      dynamic_axes=dynamic_axes,
                      training=torch.onnx.TrainingMode.TRAINING if training else torch.onnx.TrainingMode.EVAL,
                      do_constant_folding=not training)
    params[name] = sum(p.numel() for p in module.parameters())
    size = os.path.getsize(path)
    assert size < 1 << 20, f"{path} is {size} bytes; the tests keep every file under 1 MB"
    if references is not None:
        references[name] = reference_output(module, path, args, vocab)


def save(model, out_dir, name):
    onnx.save(model, os.path.join(out_dir, name + ".onnx"))


def passthrough_model():
    """Identity, Dropout (kept as dropout), Constant + Reshape, Unsqueeze + Squeeze."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 2, 4, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 5])
    w = numpy_helper.from_array(np.full((32, 5), 0.01, dtype=np.float32), "w")
    nodes = [
        helper.make_node("Identity", ["x"], ["x_same"], name="keep"),
        helper.make_node("Constant", [], ["target"], name="target_shape",
                         value=numpy_helper.from_array(np.array([3, -1], dtype=np.int64))),
        helper.make_node("Reshape", ["x_same", "target"], ["flat"], name="flatten_by_reshape"),
        helper.make_node("Dropout", ["flat"], ["dropped"], name="drop", ratio=0.25),
        helper.make_node("Unsqueeze", ["dropped"], ["wide"], name="widen", axes=[2]),
        helper.make_node("Squeeze", ["wide"], ["narrow"], name="narrow", axes=[2]),
        helper.make_node("Gemm", ["narrow", "w"], ["y"], name="head"),
    ]
    graph = helper.make_graph(nodes, "passthrough", [x], [y], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)], producer_name="export_models.py")


def single_node_model(op, attributes, opset=13, name="node"):
    """x [1, 2, 8, 8] -> one node with a weight -> y; for the refusal tests."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 8, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    inits, inputs = [], ["x"]
    if op == "Conv":
        inits.append(numpy_helper.from_array(np.zeros((4, 2, 3, 3), dtype=np.float32), "w"))
        inputs.append("w")
    node = helper.make_node(op, inputs, ["y"], name=name, **attributes)
    graph = helper.make_graph([node], op.lower(), [x], [y], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="export_models.py")


def bad_models(out_dir):
    bad = os.path.join(out_dir, "bad")
    os.makedirs(bad, exist_ok=True)
    with open(os.path.join(out_dir, "mlp.onnx"), "rb") as f:
        whole = f.read()
    with open(os.path.join(bad, "truncated.onnx"), "wb") as f:
        f.write(whole[: len(whole) // 2])
    with open(os.path.join(bad, "not-onnx.onnx"), "w") as f:
        f.write("this is a text file, not an ONNX model\n")
    save(single_node_model("Relu", {}, opset=9), bad, "opset9")
    save(single_node_model("Conv", {"dilations": [2, 2]}), bad, "dilated")
    save(single_node_model("Erf", {}, name="the_erf"), bad, "uncovered")
    dynamic = single_node_model("Relu", {})
    dynamic.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "N"
    save(dynamic, bad, "dynamic-batch")
    # The GPT with its first attention's scores scaled by 0.5 rather than 1/sqrt(8): the pattern is refused.
    gpt = onnx.load(os.path.join(out_dir, "gpt.onnx"))
    for node in gpt.graph.node:
        if node.name == "/blocks.0/attn/Constant_4":
            node.attribute[0].t.CopyFrom(numpy_helper.from_array(np.array(0.5, dtype=np.float32)))
    save(gpt, bad, "attention-scale")
    # The GPT with a mask that hides the first position from every query (a padding mask): not causal, refused.
    gpt = onnx.load(os.path.join(out_dir, "gpt.onnx"))
    for tensor in gpt.graph.initializer:
        if tensor.data_type == TensorProto.BOOL:
            hidden = np.zeros(tuple(tensor.dims), dtype=bool)
            hidden[..., 0] = True
            tensor.CopyFrom(numpy_helper.from_array(hidden, tensor.name))
    save(gpt, bad, "attention-mask")
    # An initializer whose bytes live in a file that is not there.
    external = single_node_model("Conv", {})
    weight = external.graph.initializer[0]
    weight.ClearField("raw_data")
    weight.data_location = TensorProto.EXTERNAL
    weight.external_data.add(key="location", value="missing-weights.bin")
    save(external, bad, "external-missing")


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "models")
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(0)
    params = {}
    refs = {}
    export(Mlp(), "mlp", (torch.randn(4, 32),), out_dir, 17, params, ["input"], references=refs)
    cnn = Cnn()
    with torch.no_grad():
        for norm in (cnn.bn1, cnn.bn2):
            norm.running_mean.uniform_(-0.5, 0.5)
            norm.running_var.uniform_(0.5, 1.5)
            norm.weight.uniform_(0.5, 1.5)
            norm.bias.uniform_(-0.5, 0.5)
    export(cnn, "cnn", (torch.randn(2, 3, 16, 16),), out_dir, 14, params, ["input"], dynamic_batch=True,
           training=True, references=refs)
    export(Residual(), "residual", (torch.randn(2, 4, 8, 8),), out_dir, 11, params, ["input"], references=refs)
    export(TwoTower(), "two-tower", (torch.randn(2, 3, 8, 8), torch.randn(2, 3, 8, 8)), out_dir, 12, params,
           ["left", "right"], references=refs)
    export(Recurrent(nn.LSTM), "lstm", (torch.randn(2, 5, 8),), out_dir, 13, params, ["input"], references=refs)
    gru = Recurrent(nn.GRU)
    with torch.no_grad():
        hidden = gru.rnn.hidden_size
        for layer in range(gru.rnn.num_layers):
            getattr(gru.rnn, f"bias_hh_l{layer}")[2 * hidden:].zero_()
    export(gru, "gru", (torch.randn(2, 5, 8),), out_dir, 15, params, ["input"], references=refs)
    # PyTorch's own GRU, b_hn as initialised: the note that its weights cannot be splitscope's.
    export(Recurrent(nn.GRU), "gru-recurrent-bias", (torch.randn(2, 5, 8),), out_dir, 15, {}, ["input"])
    # The GPT at opset 14 (layer norm exported as ReduceMean, Sub, Pow, Sqrt, Div, Mul, Add) and at opset 17
    # (one LayerNormalization node); GELU is the Erf decomposition at both (ONNX's Gelu is opset 20).
    gpt = Gpt()
    tokens = (torch.randint(0, Gpt.VOCAB, (2, 8)),)
    export(gpt, "gpt", tokens, out_dir, 14, params, ["ids"], references=refs, vocab=Gpt.VOCAB)
    export(gpt, "gpt-opset17", tokens, out_dir, 17, {}, ["ids"], references=refs, vocab=Gpt.VOCAB)
    # Q, K and V from three Linears (BERT's and many hand-written models' form), the causal mask added.
    export(Gpt(separate_qkv=True, mask="add"), "gpt-separate-qkv", tokens, out_dir, 14, params, ["ids"],
           references=refs, vocab=Gpt.VOCAB)
    # No mask: every position attends to all (an encoder's attention).
    export(Gpt(mask="none"), "gpt-unmasked", tokens, out_dir, 14, params, ["ids"], references=refs, vocab=Gpt.VOCAB)
    # Opset 11, layer norms as PyTorch initialises them: the exporter keeps one copy of their equal ones and zeros
    # and reads the others through Identity nodes.
    export(Gpt(fresh_norms=True), "gpt-opset11", tokens, out_dir, 11, {}, ["ids"], references=refs, vocab=Gpt.VOCAB)
    save(passthrough_model(), out_dir, "passthrough")
    bad_models(out_dir)
    with open(os.path.join(out_dir, "params.json"), "w") as f:
        json.dump({"comment": "PyTorch's sum(p.numel()) for each exported module (export_models.py)",
                   "params": params}, f, indent=2, sort_keys=True)
        f.write("\n")
    with open(os.path.join(out_dir, "reference.json"), "w") as f:
        json.dump({"comment": "each module's eval-mode output on splitscope's input for seed 0 (export_models.py)",
                   "models": refs}, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
