"""A generated corpus of bad scenarios: a small valid base scenario with one key mutated per case
(bad units, signs, types, sizes that would exhaust memory or time, unsafe names, special files).
Each case goes through `polycc check` (the CLI's code path, in a worker process) and must end
with exit status 2 and one message, never an internal error (1), an abort (134), an OOM kill
(137) or a hang. The few mutations that are valid on purpose are listed in ACCEPTED with the
reason, and those are also run with `polycc.run`.

The worker runs the cases one after another and reports each; a case that crashes the worker or
takes longer than CASE_TIMEOUT_S is reported against that case, and the worker restarts after it.
"""

from __future__ import annotations

import copy
import json
import math
import os
import selectors
import subprocess
import sys
from pathlib import Path
from typing import Any

CASE_TIMEOUT_S = 20.0
#: Limits the corpus runs under, so that its verdicts do not depend on this machine's memory.
LIMITS_ENV = {"POLYCC_MAX_MEMORY": "4GiB", "POLYCC_MAX_EVENTS": "5e9"}

BASE: dict[str, Any] = {
    "name": "corpus",
    "duration": "2s",
    "seed": 3,
    "bin": "100ms",
    "links": [
        {
            "id": "b",
            "rate": "10Mbps",
            "delay": "5ms",
            "loss": 0.001,
            "queue": {"kind": "codel", "size": "100pkt"},
        },
    ],
    "flows": [
        {"id": "bulk", "cca": "cubic", "rtt": "30ms"},
        {
            "id": "web",
            "cca": "newreno",
            "rtt": "40ms",
            "start": "0.5s",
            "traffic": {"kind": "web", "size": "20KB", "interval": "200ms"},
        },
        {
            "id": "video",
            "cca": "pibes",
            "rtt": "40ms",
            "traffic": {"kind": "video", "fps": 30, "min_rate": "0.5Mbps", "max_rate": "2Mbps"},
        },
    ],
}

DELETE = object()  # a mutation that removes the key

BAD_NAMES = [
    "",
    "   ",
    "../../escaped",
    "/tmp/absolute",
    "x/y",
    "a\\b",
    "..",
    ".hidden",
    "a\x00b",
    "tab\tname",
    "new\nline",
    "x" * 300,
]
BAD_DURATIONS = [
    "",
    "abc",
    "-1s",
    "5",
    "1 parsec",
    "30 ms s",
    "20000000000s",
    "1e3s",
    "nans",
    5,
    -1.5,
    True,
    [],
    {},
]
BAD_RATES = [
    "",
    "0Mbps",
    "-1Mbps",
    "50MBps",
    "5KBps",
    "1e9",
    "10Mbit",
    "100000000000Gbps",
    "fastbps",
    10,
    False,
    [],
]
BAD_SIZES = ["", "-1pkt", "2.5pkt", "1e3pkt", "100000000000000000000pkt", "10 apples", 5, [], {}]
BAD_PROBS = [-0.1, 1.0, 1.5, math.inf, -math.inf, "0.1", True, []]
BAD_IDS = [*BAD_NAMES, 5, [], {}]

MUTATIONS: dict[str, list[Any]] = {
    "name": [*BAD_NAMES, DELETE, 5, []],
    "duration": [*BAD_DURATIONS, "0", "1000000000s", "1000000s"],
    "bin": [*BAD_DURATIONS, "0", "1ns", "1us", "3s"],
    "seed": [-1, 2**64, 1.5, "x", []],
    "mss": [0, 99, 65001, -5, 2**64, "1448", 1.5],
    "header_bytes": [1448, 10**12, -1, "52", 0.5],
    "ack_bytes": [0, 10**6, -1, "64"],
    "links": [[], DELETE, {}, "b", [{}], [{"id": "b"}]],
    "flows": [[], DELETE, {}, [{}], [{"id": "a"}]],
    "limits": [{"memory": "1B"}, {"memory": "10pkt"}, {"events": 0}, {"events": 10}, {"speed": 1}, "big"],
    "surprise": [1],
    "links.0.id": [*BAD_IDS, DELETE],
    "links.0.rate": [*BAD_RATES, DELETE],
    "links.0.delay": [*BAD_DURATIONS, "1000000000s"],
    "links.0.loss": BAD_PROBS,
    "links.0.ack_loss": BAD_PROBS,
    "links.0.queue": [
        "big",
        5,
        {"kind": "red"},
        {"size": "1B"},
        {"size": "0pkt"},
        {"size": "1499B"},
        {"size": "0.00001bdp"},
        {"quantum": 0, "kind": "fq_codel"},
        {"target": "0", "kind": "codel"},
        {"colour": "red"},
    ],
    "links.0.queue.size": [*BAD_SIZES, "0pkt", "1B", "0B", "1bdp x"],
    "links.0.queue.kind": ["", "red", 1],
    "links.0.queue.target": [*BAD_DURATIONS, "0"],
    "links.0.queue.interval": [*BAD_DURATIONS, "0"],
    "links.0.queue.quantum": [-1, "1514", 2**64],
    "links.0.queue.bdp_rtt": BAD_DURATIONS,
    "links.0.jitter": [{"max": "5ms", "direction": "up"}, {"max": "-5ms"}, {}, {"max": "5ms", "x": 1}, 5],
    "links.0.ack_aggregation": [{"interval": "0"}, {"interval": "x"}, {}, 5],
    "links.0.reverse_rate": [*BAD_RATES],
    "links.0.reverse_queue": [{"size": "1B"}, {"size": "0pkt"}, 5],
    "links.0.schedule": [
        [],
        [{"at": "1s", "rate": "1Mbps"}],
        [{"at": "0s", "rate": "0Mbps"}],
        [{"at": "0s", "rate": "1Mbps", "ramp": True}],
        [{"at": "0s", "rate": "1Mbps"}, {"at": "0s", "rate": "2Mbps"}],
        [{"at": "0s", "rate": "1Mbps"}, {"at": "1s", "rate": "2Mbps", "loss": 1.0}],
        [{"at": "0s", "rate": "1Mbps", "loss": 2.0}],
        "fast",
        [5],
    ],
    "links.0.trace": [
        "no/such.trace",
        "/dev/zero",
        "/dev/null",
        ".",
        "",
        "FIFO",
        "SECRET",
        5,
        {
            "synth": "random_walk",
            "start": "10Mbps",
            "min": "1Mbps",
            "max": "20Mbps",
            "step": "1Mbps",
            "interval": "100ms",
        },
        {
            "synth": "brownian",
            "start": "10Mbps",
            "min": "1Mbps",
            "max": "20Mbps",
            "step": "1Mbps",
            "interval": "100ms",
        },
        {
            "synth": "random_walk",
            "start": "10Mbps",
            "min": "30Mbps",
            "max": "20Mbps",
            "step": "1Mbps",
            "interval": "100ms",
        },
    ],
    "flows.0.id": [*BAD_IDS, DELETE, "web"],
    "flows.0.cca": [
        "nosuch",
        "",
        5,
        [],
        {"name": "cubic", "beta": "x"},
        {"name": "cubic", "nope": 1},
        {"beta": 0.7},
        {"name": "poly"},
        {"name": "janus"},
        # Controllers that need a video source's frames, on the bulk flow.
        "pibes",
        {"name": "poly", "pilot": "cubic", "copilots": ["pibes"]},
    ],
    "flows.0.rtt": [*BAD_DURATIONS, "0", DELETE],
    "flows.0.start": BAD_DURATIONS,
    "flows.0.stop": [*BAD_DURATIONS, "0"],
    "flows.0.traffic": [
        "burst",
        5,
        {"kind": "sized"},
        {"kind": "sized", "size": "0B"},
        {"kind": "sized", "size": "1bdp"},
        {"kind": "cbr", "rate": "0Mbps"},
        {"kind": "poisson", "rate": "50MBps"},
        {"kind": "cbr"},
        {"kind": "teleport"},
    ],
    "flows.0.path": [[], ["nope"], "b", [5]],
    "flows.0.reverse": [True, "yes", 1],
    "flows.0.ack": ["sometimes", {"every": 0}, {"every": -1}, {"max_delay": "x"}, 5],
    "flows.0.pacing": ["yes", 1],
    "flows.0.rwnd": ["1pkt", "1bdp", "0B", *BAD_SIZES],
    "flows.0.count": [0, -1, 1000000, 2**40, 1.5, "2"],
    "flows.0.intent": [
        {"class": "bandwidth_guarantee"},
        {"class": "telepathy"},
        {"class": "bulk", "target_rate": "1Mbps"},
        {"class": "bandwidth_guarantee", "target_rate": "-1Mbps"},
        {"class": "realtime_video", "min_rate": "5Mbps", "max_rate": "1Mbps"},
        5,
    ],
    "flows.0.intent_schedule": [
        [{"at": "0s", "intent": {"class": "bulk"}}],
        [{"at": "5s", "intent": {"class": "bulk"}}],
        [{"at": "1s"}],
        "x",
    ],
    "flows.0.send_jitter": [*BAD_DURATIONS, "2s"],
    "flows.0.send_jitter_dist": ["normal", 5],
    "flows.1.traffic.size": [*BAD_SIZES, "0B", "1bdp"],
    "flows.1.traffic.interval": [*BAD_DURATIONS, "0", "1ns"],
    "flows.1.traffic.arrivals": ["bursty", 5],
    "flows.1.traffic.connection": ["keepalive", 5],
    # PIBES (flow 2) without its video source.
    "flows.2.traffic": [
        "bulk",
        {"kind": "sized", "size": "1MB"},
        {"kind": "web", "size": "20KB", "interval": "1s"},
    ],
    "flows.2.traffic.fps": [0, -30, 1e9, math.inf, "30"],
    "flows.2.traffic.min_rate": [*BAD_RATES, "5Mbps"],
    "flows.2.traffic.max_rate": BAD_RATES,
    "flows.2.traffic.packet": ["1pkt", "10B", "100000B", "1bdp", *BAD_SIZES],
    "flows.2.traffic.fec": [-0.1, 5.0, math.inf, "x"],
    "flows.2.traffic.frame_noise": [-0.1, 0.6, "x"],
}

#: Mutations that are valid on purpose, as (key, start of repr(value)) -> why; each is also run.
ACCEPTED: dict[tuple[str, str], str] = {
    ("links.0.delay", "'1000000000s'"): "a delay longer than the run: nothing arrives, the summary says so",
    ("links.0.reverse_queue", "{'size': '1B'}"): "reverse_queue is used only with reverse_rate (README)",
    ("links.0.reverse_queue", "{'size': '0pkt'}"): "reverse_queue is used only with reverse_rate (README)",
    (
        "links.0.trace",
        "{'synth': 'random_walk', 'start': '10Mbps', 'min': '1Mbps'",
    ): "a valid synthetic trace",
    ("flows.0.cca", "{'name': 'poly'}"): "PolyCC's default pool",
    ("flows.0.cca", "{'name': 'janus'}"): "Janus's default stages",
    ("flows.0.intent_schedule", "[{'at': '5s'"): "a change of intent after the end never happens",
    ("flows.2.traffic.min_rate", "'0Mbps'"): "an encoder without a floor",
}


def _set(doc: dict[str, Any], key: str, value: Any) -> None:
    parts = key.split(".")
    node: Any = doc
    for p in parts[:-1]:
        node = node[int(p)] if isinstance(node, list) else node.setdefault(p, {})
    last = parts[-1]
    if value is DELETE:
        node.pop(last, None)
    else:
        node[last] = copy.deepcopy(value)


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)  # JSON's escapes are TOML basic-string escapes
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_toml_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(type(v))


def to_toml(doc: dict[str, Any]) -> str:
    return "".join(f"{json.dumps(k)} = {_toml_value(v)}\n" for k, v in doc.items())


def cases(tmp: Path) -> list[tuple[str, str]]:
    """(label, TOML text) of every mutation; special trace values point at files made here."""
    fifo = tmp / "trace.fifo"
    os.mkfifo(fifo)
    secret = tmp / "secret.trace"
    secret.write_text("root:$6$hash:19000:0:99999:7:::\n")
    special = {"FIFO": str(fifo), "SECRET": str(secret)}
    out = []
    for key, values in MUTATIONS.items():
        for v in values:
            if isinstance(v, str) and v in special and key.endswith("trace"):
                v = special[v]
            doc = copy.deepcopy(BASE)
            if key.startswith("links.0.") and key.split(".")[2] in ("schedule", "trace"):
                doc["links"][0].pop("rate")
            _set(doc, key, v)
            label = f"{key}={'<deleted>' if v is DELETE else repr(v)[:60]}"
            out.append((label, to_toml(doc)))
    return out


WORKER = r"""
import json, sys
from click.testing import CliRunner
from polycc.cli import cli
import polycc
accepted = set(json.loads(sys.argv[1]))
for line in sys.stdin:
    i, path = json.loads(line)
    print(json.dumps(["begin", i]), flush=True)
    res = CliRunner().invoke(cli, ["check", path], catch_exceptions=True)
    code = res.exit_code
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        code = "exception " + repr(res.exception)
    elif code == 0 and i in accepted:
        polycc.run(path)
    lines = res.stderr.strip().splitlines()
    print(json.dumps(["end", i, code, lines]), flush=True)
"""


def run_corpus(files: list[Path], accepted: set[int]) -> dict[int, tuple[Any, list[str]]]:
    """Exit status and stderr lines of `polycc check` per case; a crash or hang is its status."""
    results: dict[int, tuple[Any, list[str]]] = {}
    env = {**os.environ, **LIMITS_ENV}
    todo = list(range(len(files)))
    while todo:
        proc = subprocess.Popen(
            [sys.executable, "-c", WORKER, json.dumps(sorted(accepted))],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("".join(json.dumps([i, str(files[i])]) + "\n" for i in todo))
        proc.stdin.close()
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        current = None
        while True:
            # Importing polycc before the first case is not the case's time.
            timeout = CASE_TIMEOUT_S if current is not None else 120.0
            if not sel.select(timeout):
                proc.kill()
                break
            line = proc.stdout.readline()
            if not line:
                break
            msg = json.loads(line)
            if msg[0] == "begin":
                current = msg[1]
            else:
                results[msg[1]] = (msg[2], msg[3])
                current = None
        status = proc.wait()
        sel.close()
        if current is not None:
            results[current] = (
                f"hang (>{CASE_TIMEOUT_S} s)" if status == -9 else f"crash (status {status})",
                [],
            )
        done = [i for i in todo if i in results]
        if not done:
            raise AssertionError(f"the corpus worker failed to start (status {status})")
        todo = [i for i in todo if i not in results]
    return results


def test_every_bad_scenario_exits_2_with_one_message(tmp_path: Path) -> None:
    corpus = cases(tmp_path)
    assert len(corpus) >= 300, len(corpus)
    files = []
    for i, (_, text) in enumerate(corpus):
        f = tmp_path / f"case{i:03}.toml"
        f.write_text(text)
        files.append(f)
    accepted = {
        i for i, (label, _) in enumerate(corpus) if any(label.startswith(f"{k}={v}") for k, v in ACCEPTED)
    }
    assert len(accepted) == len(ACCEPTED), "an ACCEPTED entry matches no case"
    results = run_corpus(files, accepted)
    bad = []
    for i, (label, _) in enumerate(corpus):
        code, lines = results[i]
        want = 0 if i in accepted else 2
        if code != want or (want == 2 and (len(lines) != 1 or "Traceback" in "".join(lines))):
            bad.append(f"{label}: status {code}: {lines[:3]}")
        if want == 2 and lines:
            assert files[i].name in lines[0], (label, lines)
            assert "root:" not in lines[0], (label, lines)  # a trace's content is never echoed
    assert not bad, "\n".join(bad)
