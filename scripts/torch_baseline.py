#!/usr/bin/env python3
"""The PyTorch single-device baseline of scripts/gpu-check.

Builds each network of a splitscope network file (docs/network-format.md) in PyTorch on
one GPU -- dense, conv2d (with groups), max/avg pooling, activations,
flatten, softmax, nn.LSTM / nn.GRU stacks with batch_first, and the joins
add and concat of graph networks (docs/network-format.md) -- and times
its forward pass (with --train, a training step: forward, loss, backward and
an SGD update) with CUDA events: warm-up runs, then the median of N; with
--profile, one more step under torch.profiler, its device time per op.
Prints one JSON object per network (one JSON list for several files), or
writes it with --out.

fp32 means fp32: TF32 is switched off in cuBLAS and cuDNN, as splitscope's
--dtype fp32 does; --dtype tf32 switches it on. cudnn.benchmark is on (the
fastest convolution algorithms PyTorch can find), which is PyTorch at its best.

Usage: torch_baseline.py NETWORK.json [NETWORK.json ...] [--repeat N]
       [--warmup N] [--dtype fp32|tf32] [--batch B] [--out FILE.json]
       [--train] [--profile] [--device cuda|cpu]
"""

import argparse
import json
import math
import statistics
import sys
import time


def pair(value):
    return (value, value) if isinstance(value, int) else (value[0], value[1])


def activation_module(nn, name):
    return {"relu": nn.ReLU(), "tanh": nn.Tanh(), "sigmoid": nn.Sigmoid()}.get(name or "none")


def layer_inputs(network, index, layer, previous):
    """The names a layer reads (docs/network-format.md): its "inputs", else the
    layer before it in the file, else the network's only input."""
    named = layer.get("inputs")
    if named is not None:
        return [named] if isinstance(named, str) else list(named)
    if previous is not None:
        return [previous]
    if "inputs" in network:
        raise SystemExit(f"torch_baseline: layers[{index}]: the network has several inputs, so it must name one")
    return ["input"]


def build(torch, network):
    """The network as an nn.Module, following docs/network-format.md's shape
    rules: a graph of named layers (joins `add` and `concat` included)."""
    nn = torch.nn

    class RecurrentStack(nn.Module):
        def __init__(self, cell, input_size, hidden, layers, bias, return_sequences):
            super().__init__()
            kind = nn.LSTM if cell == "lstm" else nn.GRU
            self.rnn = kind(input_size, hidden, num_layers=layers, bias=bias, batch_first=True)
            self.return_sequences = return_sequences

        def forward(self, x):
            output, _ = self.rnn(x)
            return output if self.return_sequences else output[:, -1, :]

    def single(index, layer, shape):
        """One reading layer: its module (activation included) and output shape."""
        kind = layer["type"]
        modules = []
        if kind == "dense":
            modules.append(nn.Linear(shape[0], layer["units"], bias=layer.get("bias", True)))
            shape = [layer["units"]]
            act = activation_module(nn, layer.get("activation"))
            if act is not None:
                modules.append(act)
        elif kind == "conv2d":
            kh, kw = pair(layer["kernel"])
            sh, sw = pair(layer.get("stride", 1))
            ph, pw = pair(layer.get("padding", 0))
            modules.append(nn.Conv2d(shape[0], layer["filters"], (kh, kw), stride=(sh, sw), padding=(ph, pw),
                                     groups=layer.get("groups", 1), bias=layer.get("bias", True)))
            shape = [layer["filters"], (shape[1] + 2 * ph - kh) // sh + 1, (shape[2] + 2 * pw - kw) // sw + 1]
            act = activation_module(nn, layer.get("activation"))
            if act is not None:
                modules.append(act)
        elif kind in ("maxpool", "avgpool"):
            kh, kw = pair(layer["kernel"])
            sh, sw = pair(layer.get("stride", layer["kernel"]))
            ph, pw = pair(layer.get("padding", 0))
            # A padded window holds the real elements only (splitscope's rule,
            # cuDNN's COUNT_EXCLUDE_PADDING): max pooling pads with -inf in
            # PyTorch already; average pooling must not count the padding.
            if kind == "maxpool":
                modules.append(nn.MaxPool2d((kh, kw), stride=(sh, sw), padding=(ph, pw)))
            else:
                modules.append(nn.AvgPool2d((kh, kw), stride=(sh, sw), padding=(ph, pw), count_include_pad=False))
            shape = [shape[0], (shape[1] + 2 * ph - kh) // sh + 1, (shape[2] + 2 * pw - kw) // sw + 1]
        elif kind == "flatten":
            modules.append(nn.Flatten())
            shape = [math.prod(shape)]
        elif kind == "softmax":
            modules.append(nn.Softmax(dim=-1))
        elif kind in ("relu", "tanh", "sigmoid"):
            modules.append(activation_module(nn, kind))
        elif kind in ("lstm", "gru"):
            return_sequences = layer.get("return_sequences", True)
            modules.append(RecurrentStack(kind, shape[1], layer["hidden"], layer.get("layers", 1),
                                          layer.get("bias", True), return_sequences))
            shape = [shape[0], layer["hidden"]] if return_sequences else [layer["hidden"]]
        else:
            raise SystemExit(f"torch_baseline: layers[{index}]: unknown layer type '{kind}'")
        return nn.Sequential(*modules), shape

    class Graph(nn.Module):
        def __init__(self):
            super().__init__()
            shapes = dict(network["inputs"]) if "inputs" in network else {"input": list(network["input"])}
            self.input_names = sorted(shapes)
            reads = {}
            previous = None
            for index, layer in enumerate(network["layers"]):
                name = layer.get("name", f"{layer['type']}{index}")
                reads[name] = (index, layer, layer_inputs(network, index, layer, previous))
                previous = name
            # Dependency order, file order among layers that do not depend on
            # each other, as splitscope runs them.
            self.order = []
            self.steps = nn.ModuleDict()
            pending = list(reads)
            while pending:
                ready = next((n for n in pending if all(i in shapes for i in reads[n][2])), None)
                if ready is None:
                    raise SystemExit(f"torch_baseline: the layers {pending} read each other in a cycle")
                pending.remove(ready)
                index, layer, inputs = reads[ready]
                kind = layer["type"]
                if kind == "add":
                    shapes[ready] = list(shapes[inputs[0]])
                elif kind == "concat":
                    first = shapes[inputs[0]]
                    shapes[ready] = [sum(shapes[i][0] for i in inputs)] + list(first[1:])
                else:
                    self.steps[ready], shapes[ready] = single(index, layer, shapes[inputs[0]])
                self.order.append((ready, kind, inputs))
            # The network's output: the layer no other layer reads.
            self.output = [n for n, _, _ in self.order if not any(n in r[2] for r in reads.values())][-1]

        def forward(self, *xs):
            values = dict(zip(self.input_names, xs))
            for name, kind, inputs in self.order:
                if kind == "add":
                    values[name] = sum(values[i] for i in inputs)
                elif kind == "concat":
                    values[name] = torch.cat([values[i] for i in inputs], dim=1)  # axis 0 after the batch
                else:
                    values[name] = self.steps[name](values[inputs[0]])
            return values[self.output]

    return Graph()


class StepClock:
    """Times one call on the device: CUDA events on a GPU, the wall clock on the cpu (--device cpu, for trying
    the script where there is no GPU)."""

    def __init__(self, torch, device):
        self.torch = torch
        self.cuda = device.type == "cuda"

    def milliseconds(self, call):
        if self.cuda:
            start = self.torch.cuda.Event(enable_timing=True)
            stop = self.torch.cuda.Event(enable_timing=True)
            start.record()
            call()
            stop.record()
            stop.synchronize()
            return start.elapsed_time(stop)
        begin = time.perf_counter()
        call()
        return (time.perf_counter() - begin) * 1e3


def profiled_ops(torch, device, call):
    """One profiled call: device time (self, summed over calls) and host time per op name, largest first: the
    kernels an eager framework launches per layer, its optimizer's update among them."""
    activities = [torch.profiler.ProfilerActivity.CPU]
    if device.type == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    with torch.profiler.profile(activities=activities) as profile:
        call()
        if device.type == "cuda":
            torch.cuda.synchronize()
    ops = []
    for event in profile.key_averages():
        device_us = event.self_cuda_time_total if device.type == "cuda" else event.self_cpu_time_total
        if device_us > 0:
            ops.append({"name": event.key, "calls": event.count, "device_us": device_us,
                        "host_us": event.self_cpu_time_total})
    return sorted(ops, key=lambda op: -op["device_us"])


def time_network(torch, path, args):
    with open(path) as handle:
        network = json.load(handle)
    batch = args.batch or network["batch"]
    device = torch.device(args.device)
    model = build(torch, network).to(device)
    shapes = network["inputs"] if "inputs" in network else {"input": network["input"]}
    xs = [torch.randn(batch, *shapes[name], device=device) for name in sorted(shapes)]
    clock = StepClock(torch, device)
    if args.train:
        # A training step as PyTorch runs one: forward, loss, backward, SGD with momentum (splitscope's
        # --optimizer sgd --momentum 0.9). The zoo's networks end in softmax, so the loss is the negative log
        # of the label's probability: cross-entropy.
        model.train()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        with torch.no_grad():
            classes = model(*xs).shape[-1]
        labels = torch.randint(0, classes, (batch,), device=device)

        def call():
            optimizer.zero_grad(set_to_none=True)
            probabilities = model(*xs).reshape(batch, -1)
            loss = torch.nn.functional.nll_loss(torch.log(probabilities.clamp_min(1e-30)), labels)
            loss.backward()
            optimizer.step()
    else:
        model.eval()

        def call():
            with torch.inference_mode():
                model(*xs)

    for _ in range(args.warmup):
        call()
    if device.type == "cuda":
        torch.cuda.synchronize()
    times = [clock.milliseconds(call) for _ in range(args.repeat)]
    result = {
        "schema": "splitscope.torch_baseline/1",
        "network": network.get("name", path),
        "file": path,
        "batch": batch,
        "dtype": args.dtype,
        "step": "training (forward, loss, backward, SGD momentum 0.9)" if args.train else "forward",
        "median_ms": statistics.median(times),
        "min_ms": min(times),
        "max_ms": max(times),
        "repeats": args.repeat,
        "warmup": args.warmup,
        "device": torch.cuda.get_device_name(0) if device.type == "cuda" else "cpu",
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version() if device.type == "cuda" else None,
        "cudnn_benchmark": True,
    }
    if args.profile:
        result["profiled_ops"] = profiled_ops(torch, device, call)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("networks", nargs="+", help="splitscope network files")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--dtype", choices=["fp32", "tf32"], default="fp32")
    parser.add_argument("--batch", type=int, default=0, help="override the files' batch")
    parser.add_argument("--out", help="write the JSON here instead of printing it")
    parser.add_argument("--train", action="store_true", help="time a training step (forward, backward, SGD)")
    parser.add_argument("--profile", action="store_true",
                        help="add one profiled step's device and host time per op (torch.profiler)")
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda",
                        help="cpu: try the script where there is no GPU (its times say nothing of a GPU)")
    args = parser.parse_args()
    if args.repeat < 1:
        raise SystemExit("torch_baseline: --repeat must be at least 1")

    try:
        import torch
    except ImportError:
        print("torch_baseline: this python3 has no torch; run it in the GPU machine's PyTorch environment",
              file=sys.stderr)
        return 3
    if args.device == "cuda" and not torch.cuda.is_available():
        print("torch_baseline: torch sees no CUDA GPU here (--device cpu tries the script without one)",
              file=sys.stderr)
        return 3
    tf32 = args.dtype == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cudnn.benchmark = True

    results = [time_network(torch, path, args) for path in args.networks]
    text = json.dumps(results[0] if len(results) == 1 else results, indent=2) + "\n"
    if args.out:
        with open(args.out, "w") as handle:
            handle.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
