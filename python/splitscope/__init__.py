"""splitscope from Python: the commands of the `splitscope` executable as
functions, their JSON reports as Python objects (docs/python.md).

    import splitscope
    net = splitscope.load("mlp")                  # inspect
    plan = net.plan("pipeline", 4)                # plan
    report = plan.simulate("h100-nvlink-8")       # run --plan ... --backend sim
    table = splitscope.compare("mlp", devices=4, backend="sim", machine="h100-nvlink-8")

Each call runs the command in this process (the native module _native),
with the Python interpreter's lock released while it works; keyword options
are the command's options (`microbatches=8` is `--microbatches=8`, `train=True`
is `--train`, a list is comma-separated). Results have exactly the fields of
the command's JSON (docs/reports.md), numeric lists as NumPy arrays where
NumPy is installed. Errors raise BadInput, Unavailable or Failure, with the
command's message and its exit code.
"""

import json
import os
import tempfile

from . import _native

try:
    import numpy as _numpy
except ImportError:  # results keep plain lists
    _numpy = None

__all__ = ["Error", "Failure", "BadInput", "Unavailable", "Network", "Plan", "load", "compare", "sweep"]


class Error(Exception):
    """A command failed; `exit_code` is the exit code `splitscope` would give."""

    exit_code = 1

    def __init__(self, message):
        super().__init__(message)
        self.message = message


class Failure(Error):
    """A failure while running (exit 1)."""

    exit_code = 1


class BadInput(Error):
    """Bad input: an unknown network, strategy or option, an impossible device count (exit 2)."""

    exit_code = 2


class Unavailable(Error):
    """The asked-for backend or feature is not in this build or on this machine (exit 3)."""

    exit_code = 3


_ERRORS = {1: Failure, 2: BadInput, 3: Unavailable}


def _command(*arguments):
    """Runs `splitscope ARGUMENTS...`; returns what it printed on stdout."""
    status, printed, message = _native.run_command([str(argument) for argument in arguments])
    if status != 0:
        if not message:  # the command said what went wrong on stderr itself
            message = f"splitscope {arguments[0]} failed with exit code {status} (its message is on stderr)"
        raise _ERRORS.get(status, Failure)(message)
    return printed


def _option_words(options):
    """Keyword options as the command's options: a_b=1 is --a-b=1 (with `=`, so
    that a value starting with '-' reaches the option and its check)."""
    words = []
    for key, value in options.items():
        name = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            words.append(name)
        elif isinstance(value, (list, tuple)):
            words.append(name + "=" + ",".join(str(item) for item in value))
        else:
            words.append(f"{name}={value}")
    return words


def _with_arrays(value):
    """The JSON value with every non-empty list of numbers as a NumPy array."""
    if isinstance(value, dict):
        return {key: _with_arrays(item) for key, item in value.items()}
    if isinstance(value, list):
        numeric = value and all(isinstance(item, (int, float)) and not isinstance(item, bool) for item in value)
        if numeric and _numpy is not None:
            return _numpy.array(value)
        return [_with_arrays(item) for item in value]
    return value


def _report(arguments, report_option="--report"):
    """Runs a command that writes its JSON report to a file; returns the report."""
    with tempfile.TemporaryDirectory(prefix="splitscope-python-") as folder:
        path = os.path.join(folder, "report.json")
        _command(*arguments, report_option, path)
        with open(path, encoding="utf-8") as file:
            return _with_arrays(json.load(file))


# The options of `plan` that say which network MODEL is (a training step, its
# optimizer) rather than how it is split; the plan file keeps the split, and
# `run --plan` needs these again (docs/plan.md).
_NETWORK_OPTIONS = ("train", "optimizer", "lr", "momentum")


class Network:
    """A network (`splitscope inspect MODEL --json`): its layers, FLOPs and parameters."""

    def __init__(self, model, batch, inspected):
        self.model = model  # the name or path it was loaded from
        self._batch_option = batch
        self._inspected = _with_arrays(inspected)
        self.name = inspected["name"]
        self.batch = inspected["batch"]
        self.layers = self._inspected["layers"]
        self.flops = inspected["flops"]
        self.params = inspected["params"]

    def to_dict(self):
        """Everything `inspect --json` prints."""
        return self._inspected

    def plan(self, strategy, devices, **options):
        """`splitscope plan MODEL --strategy STRATEGY --devices DEVICES [options]`."""
        arguments = ["plan", self.model, "--strategy", strategy, "--devices", devices]
        arguments += _option_words({"batch": self._batch_option, **options})
        with tempfile.TemporaryDirectory(prefix="splitscope-python-") as folder:
            path = os.path.join(folder, "plan.json")
            printed = _command(*arguments, "--json", "--out", path)
            with open(path, encoding="utf-8") as file:
                plan_file = file.read()
        # `run --plan` rebuilds the plan from the file over the network these options make of MODEL.
        network_options = {key: options[key] for key in _NETWORK_OPTIONS if key in options}
        return Plan(self.model, json.loads(printed), plan_file, network_options)

    def __repr__(self):
        return f"<splitscope.Network {self.name}: {len(self.layers)} layers, {self.flops} FLOPs, {self.params} params>"


class Plan:
    """What runs where (`splitscope plan --json`), and the plan file (`plan --out`) that runs it."""

    def __init__(self, model, planned, plan_file, network_options):
        self.model = model
        self._network_options = network_options
        self._planned = _with_arrays(planned)
        self.plan_file = plan_file  # the splitscope.plan/1 document (docs/plan.md)
        self.strategy = planned["strategy"]
        self.devices = planned["devices"]
        self.per_device = self._planned["per_device"]  # ops, FLOPs and memory of each device
        self.transfers = self._planned["transfers"]
        self.collectives = self._planned["collectives"]

    def to_dict(self):
        """Everything `plan --json` prints."""
        return self._planned

    def save(self, path):
        """Writes the plan file, for `splitscope run --plan PATH` and the other commands' --plan."""
        with open(path, "w", encoding="utf-8") as file:
            file.write(self.plan_file)

    def _run(self, backend, options):
        with tempfile.TemporaryDirectory(prefix="splitscope-python-") as folder:
            path = os.path.join(folder, "plan.json")
            self.save(path)
            arguments = ["run", self.model, "--plan", path, "--backend", backend, "--quiet"]
            return _report(arguments + _option_words({**self._network_options, **options}))

    def simulate(self, machine, **options):
        """`splitscope run MODEL --plan PLAN --backend sim --machine MACHINE`: the run report."""
        return self._run("sim", {"machine": machine, **options})

    def run(self, backend="cpu", **options):
        """`splitscope run MODEL --plan PLAN --backend BACKEND`: the run report of a measured run."""
        return self._run(backend, options)

    def __repr__(self):
        return f"<splitscope.Plan {self.strategy} on {self.devices} device(s)>"


def load(model, batch=None):
    """A network file, an .onnx file or a name from models/networks (`splitscope inspect MODEL`)."""
    arguments = ["inspect", model, "--json"] + _option_words({"batch": batch})
    return Network(model, batch, json.loads(_command(*arguments)))


def compare(model="mlp", **options):
    """`splitscope compare MODEL [options]`: the compare report (splitscope.compare/1)."""
    return _report(["compare", model, "--quiet"] + _option_words(options))


def sweep(over, model, **options):
    """`splitscope sweep --over NAME=V1,V2,... run MODEL [options]`: the sweep (splitscope.sweep/1).

    `over` maps run's option names to the values to sweep, e.g. {"devices": [1, 2, 4]}."""
    swept = []
    for name, values in over.items():
        swept += ["--over", name.replace("_", "-") + "=" + ",".join(str(value) for value in values)]
    arguments = ["sweep"] + swept + ["--json", "--quiet", "run", model] + _option_words(options)
    return _with_arrays(json.loads(_command(*arguments)))
