#!/usr/bin/python3
"""The Python module (docs/python.md) against the `splitscope` command.

Every function's result must equal the command's JSON for the same command
line, field by field (the simulator is deterministic; a cpu run's times
vary, so there only its structure and its non-timing fields); errors must
carry the command's message and exit code; a simulation must leave the
interpreter's lock to other threads; and the examples of docs/python.md and
the README's Python lines must print what those pages show.

Run by `meson test --suite python` with PYTHONPATH=build/python,
SPLITSCOPE_BIN (the built command) and SPLITSCOPE_SOURCE_ROOT set.
"""

import doctest
import json
import math
import os
import subprocess
import tempfile
import threading
import time
import unittest

import splitscope

BIN = os.environ["SPLITSCOPE_BIN"]
SOURCE_ROOT = os.environ["SPLITSCOPE_SOURCE_ROOT"]

# The fields of a report that say where and when it was made (date,
# executable, command line), not what it found.
CONTEXT_FIELDS = {"context"}


def cli(*arguments, expect=0):
    """Runs the command; returns (stdout, stderr), checking the exit code."""
    done = subprocess.run([BIN, *[str(a) for a in arguments]], capture_output=True, text=True, timeout=120)
    if done.returncode != expect:
        raise AssertionError(f"splitscope {' '.join(map(str, arguments))} exited {done.returncode}: {done.stderr}")
    return done.stdout, done.stderr


def cli_report(*arguments):
    """The JSON report a command writes with --report FILE."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "report.json")
        cli(*arguments, "--report", path, "--quiet")
        with open(path, encoding="utf-8") as file:
            return json.load(file)


def plain(value):
    """A module result as plain JSON values: NumPy arrays back to lists."""
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    if hasattr(value, "tolist"):
        return value.tolist()
    return value


def without_context(report):
    if isinstance(report, dict):
        return {key: without_context(item) for key, item in report.items() if key not in CONTEXT_FIELDS}
    if isinstance(report, list):
        return [without_context(item) for item in report]
    return report


def shape(value):
    """The structure of a JSON value: its keys and the kinds of its leaves."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(item) for item in value]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return type(value).__name__
    return "number"



def assert_close(test, got, expected, where="report"):
    """Equal, but floats within a relative 1e-12."""
    if isinstance(expected, float) and isinstance(got, (int, float)):
        test.assertTrue(math.isclose(got, expected, rel_tol=1e-12, abs_tol=1e-300), f"{where}: {got} != {expected}")
    elif isinstance(expected, dict) and isinstance(got, dict):
        test.assertEqual(sorted(got), sorted(expected), where)
        for key in expected:
            assert_close(test, got[key], expected[key], f"{where}.{key}")
    elif isinstance(expected, list) and isinstance(got, list):
        test.assertEqual(len(got), len(expected), where)
        for index, (a, b) in enumerate(zip(got, expected)):
            assert_close(test, a, b, f"{where}[{index}]")
    else:
        test.assertEqual(got, expected, where)

class SameAsTheCommand(unittest.TestCase):
    maxDiff = None

    def test_load_is_inspect(self):
        network = splitscope.load("mlp-small")
        inspected = json.loads(cli("inspect", "mlp-small", "--json")[0])
        self.assertEqual(plain(network.to_dict()), inspected)
        # The README's inspect table: 17.29 k parameters, 272.38 k FLOPs; fc1 is 64 x (64 + 1) weights.
        self.assertEqual(network.params, inspected["params"])
        self.assertEqual(network.flops, inspected["flops"])
        fc1 = next(layer for layer in network.layers if layer["name"] == "fc1")
        self.assertEqual(fc1["params"], 64 * 65)
        self.assertEqual(network.name, "mlp-small")

    def test_load_batch(self):
        self.assertEqual(plain(splitscope.load("mlp-small", batch=8).to_dict()),
                         json.loads(cli("inspect", "mlp-small", "--batch", 8, "--json")[0]))

    def test_load_onnx(self):
        path = os.path.join(SOURCE_ROOT, "tests", "onnx", "models", "cnn.onnx")
        done = subprocess.run([BIN, "inspect", path, "--batch", "4", "--json"], capture_output=True, text=True)
        if done.returncode == 3:  # a build without libonnx: the module refuses as the command does
            with self.assertRaises(splitscope.Unavailable) as raised:
                splitscope.load(path, batch=4)
            self.assertEqual("error: " + str(raised.exception), done.stderr.rstrip("\n"))
            return
        self.assertEqual(done.returncode, 0, done.stderr)
        network = splitscope.load(path, batch=4)
        self.assertEqual(plain(network.to_dict()), json.loads(done.stdout))
        self.assertEqual(network.batch, 4)
        report = network.plan("data", 2).simulate("h100-nvlink-8")
        # `run --strategy data` on sim plays its alike replicas once (docs/plan.md, "Replicas held once"), where the
        # module's plan file rebuilds every replica: the same figures, summed in another order (the model error's
        # last digit), so floats are held to 1e-12 here and everything else exactly.
        assert_close(self, without_context(plain(report)),
                     without_context(cli_report("run", path, "--batch", 4, "--strategy", "data", "--devices", 2,
                                                "--backend", "sim", "--machine", "h100-nvlink-8")))

    def test_plan_is_plan_json(self):
        plan = splitscope.load("mlp").plan("pipeline", 4, microbatches=8)
        expected = json.loads(cli("plan", "mlp", "--strategy", "pipeline", "--devices", 4, "--microbatches", 8,
                                  "--json")[0])
        self.assertEqual(plain(plan.to_dict()), expected)
        self.assertEqual(len(plan.per_device), 4)
        self.assertEqual(plain(plan.transfers), expected["transfers"])
        # The plan file is the one `plan --out` writes.
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "plan.json")
            cli("plan", "mlp", "--strategy", "pipeline", "--devices", 4, "--microbatches", 8, "--out", path)
            with open(path, encoding="utf-8") as file:
                self.assertEqual(json.loads(plan.plan_file), json.load(file))

    def test_simulate_is_run_on_sim(self):
        report = splitscope.load("cnn").plan("vertical", 2).simulate("h100-nvlink-8")
        expected = cli_report("run", "cnn", "--strategy", "vertical", "--devices", 2, "--backend", "sim",
                              "--machine", "h100-nvlink-8")
        self.assertEqual(without_context(plain(report)), without_context(expected))
        self.assertIn("context", report)
        self.assertGreater(report["speedup"], 1)

    def test_simulate_options(self):
        plan = splitscope.load("mlp").plan("data", 4, train=True)
        report = plan.simulate("h100-pcie-4", steps=2, jitter="lognormal:0.2", seed=7)
        expected = cli_report("run", "mlp", "--strategy", "data", "--devices", 4, "--train", "--backend", "sim",
                              "--machine", "h100-pcie-4", "--steps", 2, "--jitter", "lognormal:0.2", "--seed", 7)
        self.assertEqual(without_context(plain(report)), without_context(expected))

    def test_cpu_run_has_the_command_s_fields(self):
        report = splitscope.load("mlp-small").plan("pipeline", 2, microbatches=2).run("cpu", repeat=1, warmup=0)
        expected = cli_report("run", "mlp-small", "--strategy", "pipeline", "--devices", 2, "--microbatches", 2,
                              "--backend", "cpu", "--repeat", 1, "--warmup", 0)
        self.assertEqual(shape(without_context(plain(report))), shape(without_context(expected)))
        for field in ("network", "strategy", "devices", "backend", "batch", "microbatches"):
            if field in expected:
                self.assertEqual(plain(report[field]), expected[field], field)

    def test_compare_is_compare(self):
        report = splitscope.compare("mlp", devices=4, backend="sim", machine="h100-pcie-4")
        expected = cli_report("compare", "mlp", "--devices", 4, "--backend", "sim", "--machine", "h100-pcie-4")
        self.assertEqual(without_context(plain(report)), without_context(expected))
        self.assertEqual(report["best"], "tensor")  # as the README's compare shows

    def test_compare_strategies_list(self):
        report = splitscope.compare("mlp", strategies=["data", "tensor"], devices=2, backend="sim",
                                    machine="h100-nvlink-8")
        expected = cli_report("compare", "mlp", "--strategies", "data,tensor", "--devices", 2, "--backend", "sim",
                              "--machine", "h100-nvlink-8")
        self.assertEqual(without_context(plain(report)), without_context(expected))

    def test_sweep_is_sweep(self):
        swept = splitscope.sweep({"devices": [1, 2, 4]}, "mlp", strategy="data", train=True, backend="sim",
                                 machine="h100-nvlink-8")
        # The same command line, spelt as the module spells options: the sweep records its run's words.
        expected = json.loads(cli("sweep", "--over", "devices=1,2,4", "--json", "--quiet", "run", "mlp",
                                  "--strategy=data", "--train", "--backend=sim", "--machine=h100-nvlink-8")[0])
        self.assertEqual(plain(swept), expected)


class ErrorsAreTheCommand_s(unittest.TestCase):
    def assert_raises_as_cli(self, kind, call, *arguments):
        """`call` raises `kind` with the exit code and the `error:` message of `splitscope ARGUMENTS`."""
        with self.assertRaises(kind) as raised:
            call()
        _, stderr = cli(*arguments, expect=kind.exit_code)
        self.assertIsInstance(raised.exception, splitscope.Error)
        self.assertEqual(raised.exception.exit_code, kind.exit_code)
        self.assertEqual("error: " + str(raised.exception), stderr.rstrip("\n"))

    def test_unknown_network(self):
        self.assert_raises_as_cli(splitscope.BadInput, lambda: splitscope.load("no-such-network"),
                                  "inspect", "no-such-network", "--json")

    def test_unknown_strategy(self):
        network = splitscope.load("mlp-small")
        self.assert_raises_as_cli(splitscope.BadInput, lambda: network.plan("diagonal", 2),
                                  "plan", "mlp-small", "--strategy", "diagonal", "--devices", 2, "--json")

    def test_impossible_device_count(self):
        network = splitscope.load("mlp-small")
        self.assert_raises_as_cli(splitscope.BadInput, lambda: network.plan("data", 0),
                                  "plan", "mlp-small", "--strategy", "data", "--devices", 0, "--json")

    def test_unknown_option(self):
        network = splitscope.load("mlp-small")
        with self.assertRaises(splitscope.BadInput) as raised:
            network.plan("data", 2, micro_batches=4)
        self.assertIn("--micro-batches", str(raised.exception))
        self.assertEqual(raised.exception.exit_code, 2)

    def test_unavailable_backend(self):
        plan = splitscope.load("mlp-small").plan("data", 2)
        with self.assertRaises(splitscope.Error) as raised:
            plan.run(backend="cuda")
        # No GPU on the machines this suite runs on: the cuda backend is unavailable (3).
        if raised.exception.exit_code != 3:
            self.skipTest(f"the cuda backend answered exit {raised.exception.exit_code}: {raised.exception}")
        self.assertIsInstance(raised.exception, splitscope.Unavailable)

    def test_option_values_reach_their_check(self):
        plan = splitscope.load("mlp-small").plan("data", 2)
        self.assert_raises_as_cli(splitscope.BadInput, lambda: plan.simulate("h100-nvlink-8", seed=-1),
                                  "run", "mlp-small", "--strategy", "data", "--devices", 2, "--backend", "sim",
                                  "--machine", "h100-nvlink-8", "--seed=-1")

    def test_classes(self):
        self.assertEqual((splitscope.Failure.exit_code, splitscope.BadInput.exit_code,
                          splitscope.Unavailable.exit_code), (1, 2, 3))
        for kind in (splitscope.Failure, splitscope.BadInput, splitscope.Unavailable):
            self.assertTrue(issubclass(kind, splitscope.Error))


class SimulationLeavesTheLock(unittest.TestCase):
    def test_a_thread_counts_while_it_simulates(self):
        plan = splitscope.load(GIL_TEST_NETWORK).plan("data", GIL_TEST_DEVICES, train=True)
        counted = 0
        stop = threading.Event()

        def count():
            nonlocal counted
            while not stop.is_set():
                counted += 1

        counter = threading.Thread(target=count)
        counter.start()
        try:
            # The counter's pace with the main thread asleep...
            time.sleep(0.05)
            before, start = counted, time.perf_counter()
            time.sleep(0.2)
            alone = (counted - before) / (time.perf_counter() - start)
            # ... and while the main thread simulates.
            before, start = counted, time.perf_counter()
            plan.simulate(GIL_TEST_MACHINE, steps=10, jitter="lognormal:0.1")
            seconds = time.perf_counter() - start
            during = (counted - before) / seconds
        finally:
            stop.set()
            counter.join()
        # Were the lock held through the simulation, the counter would run only in
        # the milliseconds of Python around it: a few percent of its pace alone.
        self.assertGreater(seconds, 0.3, "the simulation is too short to show anything")
        self.assertGreater(during, 0.25 * alone,
                           f"the counter ran at {during:.0f}/s during {seconds:.2f} s of simulation, {alone:.0f}/s alone")


# About 0.9 s on a loaded 2-core machine: ten training steps of ResNet-50 over
# 64 simulated GPUs, each drawn with noise, and its single-device baseline.
GIL_TEST_NETWORK = "resnet50"
GIL_TEST_DEVICES = 64
GIL_TEST_MACHINE = "8x8-h100-ib"


class PagesShowWhatTheModulePrints(unittest.TestCase):
    def test_docs_python_md(self):
        self.run_page(os.path.join(SOURCE_ROOT, "docs", "python.md"))

    def test_readme(self):
        self.run_page(os.path.join(SOURCE_ROOT, "README.md"))

    def run_page(self, path):
        with tempfile.TemporaryDirectory() as folder:
            here = os.getcwd()
            os.chdir(folder)  # the examples may write files
            try:
                result = doctest.testfile(path, module_relative=False, optionflags=doctest.ELLIPSIS, verbose=False)
            finally:
                os.chdir(here)
        self.assertGreater(result.attempted, 0, f"{path} shows no Python example")
        self.assertEqual(result.failed, 0, f"{path}: {result.failed} example(s) print something else")


if __name__ == "__main__":
    unittest.main()
