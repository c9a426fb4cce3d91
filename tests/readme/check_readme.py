#!/usr/bin/python3
"""Runs the README's deterministic examples and holds their output to the README's.

    check_readme.py README.md [docs/PAGE.md ...]

Every `$ splitscope ...` line in a fenced code block of the README (with its
`\\` continuation lines) is an example. The lines after it, up to the next
`$ ` line or the end of the block, are the output the README shows. An
example that shows output must be deterministic: it runs on the simulator
(`--backend sim`), or it is `inspect`, `plan` or `report`, which compute no
times, or `lessons --only` naming none of the lessons that train for real on
the cpu backend (7 and 8, docs/lessons.md). Each one is run, in order, in one fresh folder (so that `report`
finds the file an earlier example wrote; an example that shows nothing is
run only when it writes a file; the checkout's tests/ folder is linked into
it, so an example may name tests/onnx/models/FILE.onnx as a user at the
checkout's root would), with the built command
($SPLITSCOPE_BIN) and the zoo ($SPLITSCOPE_MODELS), and must exit 0.

Its shown lines must then appear in its output in the same order, each as a
whole line, with runs of spaces matching any run of spaces, and one after
another (blank lines aside) from the first shown line on, which may come
anywhere; `...` inside a line stands for any text (columns left out), and a
line that is only `...` for any lines (rows left out). So every number the README shows is a number
the command prints now, and the README cannot drift from the simulator.
Examples that show no output (cpu and cuda runs, whose times vary) are not
run; nor are lines that do not start with `$ splitscope`.

Exit codes: 0 every example matches; 1 some example does not (each
mismatch says which example, which line, and what the command printed);
2 bad usage, or a README example that is not deterministic but shows output.
"""

import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

DETERMINISTIC_COMMANDS = {"inspect", "plan", "report"}
MEASURED_LESSONS = {"7", "8"}  # they train on the cpu backend: their numbers vary


def simulated_lessons(words):
    """Whether `words` run `lessons --only` with none of the measured lessons."""
    if len(words) < 2 or words[1] != "lessons":
        return False
    only = [words[i + 1] for i, w in enumerate(words[:-1]) if w == "--only"]
    only += [w.split("=", 1)[1] for w in words if w.startswith("--only=")]
    return bool(only) and all(n.strip() not in MEASURED_LESSONS for value in only for n in value.split(","))


def examples(readme_text):
    """(line number, command words, shown output lines) for each `$ splitscope` example."""
    found = []
    in_block = False
    lines = readme_text.split("\n")
    i = 0
    current = None
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            if in_block and current:
                found.append(current)
            current = None
            in_block = not in_block
            i += 1
            continue
        if in_block and line.startswith("$ "):
            if current:
                found.append(current)
            start = i + 1
            command = line[2:]
            while command.endswith("\\") and i + 1 < len(lines):
                i += 1
                command = command[:-1] + " " + lines[i].strip()
            current = (start, command, []) if command.split()[:1] == ["splitscope"] else None
        elif in_block and current is not None:
            current[2].append(line)
        i += 1
    return found


def line_pattern(shown):
    """A regex for one shown line: `...` is any text, a run of spaces any run of spaces."""
    parts = [re.escape(part.strip()) for part in shown.strip().split("...")]
    body = r".*".join(parts)
    body = re.sub(r"(\\ )+", r"\\s+", body)
    return re.compile(r"^\s*" + body + r"\s*$")


def match(shown_lines, printed):
    """None if the shown lines appear in order in `printed`, else the first that does not."""
    printed_lines = printed.rstrip("\n").split("\n")
    at = 0
    skip = True  # the first shown line may come after lines the page leaves out (a title, say)
    for shown in shown_lines:
        if not shown.strip():
            continue
        if shown.strip() == "...":
            skip = True
            continue
        pattern = line_pattern(shown)
        if skip:
            while at < len(printed_lines) and not pattern.match(printed_lines[at]):
                at += 1
        else:
            # Blank printed lines do not count: the README may drop them.
            while at < len(printed_lines) and not printed_lines[at].strip():
                at += 1
        if at >= len(printed_lines) or not pattern.match(printed_lines[at]):
            return shown
        at += 1
        skip = False
    return None


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    binary = os.environ.get("SPLITSCOPE_BIN", "build/splitscope")
    worst = 0
    for readme in sys.argv[1:]:
        worst = max(worst, check(readme, binary))
    return worst


def check(readme, binary):
    """0, 1 or 2 as main's exit code, for one file."""
    with open(readme, encoding="utf-8") as f:
        found = examples(f.read())
    shown_examples = [e for e in found if any(line.strip() for line in e[2])]
    if not shown_examples:
        print(f"{readme}: no `$ splitscope` example with output", file=sys.stderr)
        return 2
    failures = 0
    with tempfile.TemporaryDirectory(prefix="splitscope-readme-") as folder:
        # Examples may read the checkout's test models (tests/onnx/models/...), as a
        # user at the checkout's root would: the folder sees them under the same path.
        os.symlink(os.path.join(os.path.dirname(os.path.abspath(readme)), "tests"), os.path.join(folder, "tests"))
        for line_number, command, shown in found:
            words = shlex.split(command)
            deterministic = "sim" in [words[i + 1] for i, w in enumerate(words[:-1]) if w == "--backend"] or \
                (len(words) > 1 and words[1] in DETERMINISTIC_COMMANDS) or simulated_lessons(words)
            if not any(line.strip() for line in shown):
                writes = any(w in ("--report", "--html", "--trace") for w in words)
                if deterministic and writes:  # a later example may read what it writes
                    subprocess.run([binary] + words[1:], cwd=folder, capture_output=True, check=False)
                continue
            if not deterministic:
                print(f"{readme}:{line_number}: `{command}` shows output but is not deterministic "
                      "(give it --backend sim, or show no output)", file=sys.stderr)
                return 2
            started = time.monotonic()
            result = subprocess.run([binary] + words[1:], cwd=folder, capture_output=True, text=True, check=False)
            seconds = time.monotonic() - started
            if result.returncode != 0:
                print(f"{readme}:{line_number}: `{command}` exited {result.returncode}:\n{result.stderr}")
                failures += 1
                continue
            missing = match(shown, result.stdout)
            if missing is not None:
                print(f"{readme}:{line_number}: `{command}`: the README shows\n    {missing}\n"
                      f"which the command does not print (in this order). It printed:\n{result.stdout}")
                failures += 1
            else:
                print(f"ok {readme}:{line_number} ({seconds:.1f} s): {command}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
