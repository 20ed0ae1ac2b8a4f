"""A 5000-VL network built in code with the Python API, then analysed, against the same network
loaded from YAML, then analysed: whole processes (``import rtnetlab`` included), run in turns.

The network is `rtnetlab generate afdx --vls 5000` (seed 1). The YAML side is ``rt.load(file)``;
the code side is a Python script that reads the parameters of the end systems, switches, links
and virtual links from a JSON table and calls ``add_*`` once per item in loops (what a study that
builds its network in code runs). A third script writes the 5,300 calls out one per line: Python's
compiler then takes about half a second of its own.
Both then run ``net.analyze()`` (best) and read its rows. The goal (issue 38): building in code
takes no longer than loading the YAML.

    .venv/bin/python benchmarks/api_build.py [--vls 5000] [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ANALYSE = "result = net.analyze()\nassert len(result.flows) > 0\n"


def loop_script(doc: dict) -> tuple[dict, str]:
    """A Python script that builds `doc` with the API in loops over tables of parameters read
    from a JSON file (how a study builds a network: its end systems, switches, links and VLs
    from lists), and those tables."""
    top = {k: v for k, v in doc.items() if k not in ("end_systems", "switches", "links", "flows", "name")}
    nodes = [(n["name"], {k: v for k, v in n.items() if k != "name"}) for n in doc.get("end_systems", [])]
    switches = [(n["name"], {k: v for k, v in n.items() if k != "name"}) for n in doc.get("switches", [])]
    links = [(lk["from"], lk["to"], {k: v for k, v in lk.items() if k not in ("from", "to")})
             for lk in doc.get("links", [])]
    vls = []
    for f in doc.get("flows", []):
        assert f["type"] == "virtual_link"
        rest = {k: v for k, v in f.items()
                if k not in ("name", "type", "source", "destinations", "bag", "lmax", "lmin", "id")}
        vls.append((f["name"], f["source"], tuple(f["destinations"]), f["bag"], f["lmax"], f.get("lmin"),
                    f.get("id"), rest))
    params = {"top": top, "end_systems": nodes, "switches": switches, "links": links, "vls": vls}
    return params, (
        "import json, sys\nimport rtnetlab as rt\n"
        "p = json.load(open(sys.argv[1]))\n"
        "net = rt.Network(p['name'], **p['top'])\n"
        "for name, keys in p['end_systems']:\n    net.add_end_system(name, **keys)\n"
        "for name, keys in p['switches']:\n    net.add_switch(name, **keys)\n"
        "for a, b, keys in p['links']:\n    net.add_link(a, b, **keys)\n"
        "for name, src, dst, bag, lmax, lmin, vl_id, keys in p['vls']:\n"
        "    net.add_virtual_link(name, src, dst, bag=bag, lmax=lmax, lmin=lmin, id=vl_id, **keys)\n"
    )


def code_script(doc: dict) -> str:
    """A Python script that builds `doc` with the API, one literal call per item (Python's
    compiler then takes a good part of the time: a 5000-line script)."""
    lines = ["import rtnetlab as rt", ""]
    top = {k: v for k, v in doc.items() if k not in ("end_systems", "switches", "links", "flows", "name")}
    lines.append(f"net = rt.Network({doc['name']!r}, **{top!r})")
    for es in doc.get("end_systems", []):
        keys = {k: v for k, v in es.items() if k != "name"}
        args = "".join(f", {k}={v!r}" for k, v in keys.items())
        lines.append(f"net.add_end_system({es['name']!r}{args})")
    for sw in doc.get("switches", []):
        keys = {k: v for k, v in sw.items() if k != "name"}
        args = "".join(f", {k}={v!r}" for k, v in keys.items())
        lines.append(f"net.add_switch({sw['name']!r}{args})")
    for lk in doc.get("links", []):
        keys = {k: v for k, v in lk.items() if k not in ("from", "to")}
        lines.append(f"net.add_link({lk['from']!r}, {lk['to']!r}"
                     + "".join(f", {k}={v!r}" for k, v in keys.items()) + ")")
    for f in doc.get("flows", []):
        assert f["type"] == "virtual_link"
        keys = {k: v for k, v in f.items()
                if k not in ("name", "type", "source", "destinations", "bag", "lmax")}
        lines.append(
            f"net.add_virtual_link({f['name']!r}, {f['source']!r}, {f['destinations']!r}, bag={f['bag']!r}, "
            f"lmax={f['lmax']!r}, **{keys!r})")
    return "\n".join(lines) + "\n"


def timed(args: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run(args, check=True)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vls", type=int, default=5000)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    from rtnetlab import _core
    from rtnetlab.io import formats

    doc = json.loads(_core.generate_afdx(a.vls, 0, 1, 2))
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        yaml_path = d / "net.yaml"
        yaml_path.write_text(formats.dumps_yaml(doc))
        (d / "from_yaml.py").write_text(
            f"import rtnetlab as rt\nnet = rt.load({str(yaml_path)!r})\n" + ANALYSE)
        params, script = loop_script(doc)
        (d / "params.json").write_text(json.dumps({"name": doc["name"], **params}))
        (d / "in_code.py").write_text(script + ANALYSE)
        (d / "calls.py").write_text(code_script(doc) + ANALYSE)
        py = sys.executable
        # The same analysis both ways (checked once, outside the timing).
        check = ("import runpy, sys\nsys.argv[1:] = [{!r}]\na = runpy.run_path({!r})['result'].flows\n"
                 "b = runpy.run_path({!r})['result'].flows\nc = runpy.run_path({!r})['result'].flows\n"
                 "assert a == b == c, 'not the same network'\n")
        paths = [str(d / n) for n in ("params.json", "from_yaml.py", "in_code.py", "calls.py")]
        subprocess.run([py, "-c", check.format(*paths)], check=True)
        scripts = {"yaml": "from_yaml.py", "code": "in_code.py", "calls": "calls.py"}
        times: dict[str, list[float]] = {k: [] for k in scripts}
        for _ in range(a.runs):
            for k, script in scripts.items():
                times[k].append(timed([py, str(d / script), str(d / "params.json")]))
        # The part that differs, in one process (the analysis is the same on both sides): building
        # and validating against reading and validating, alternated, warm.
        phase = (
            "import statistics, sys, time\nimport rtnetlab as rt\n"
            f"text = open({str(d / 'in_code.py')!r}).read().split('result =')[0]\n"
            "code = compile(text, 'in_code', 'exec')\n"
            "a, b = [], []\n"
            f"for _ in range({a.runs}):\n"
            "    t = time.perf_counter(); ns = {}; exec(code, ns); ns['net'].engine\n"
            "    a.append(time.perf_counter() - t)\n"
            f"    t = time.perf_counter(); rt.load({str(yaml_path)!r}).engine\n"
            "    b.append(time.perf_counter() - t)\n"
            "print(f'{statistics.median(a):.3f} {statistics.median(b):.3f}')\n"
        )
        warm = subprocess.run([py, "-c", phase, str(d / "params.json")], check=True, capture_output=True,
                              text=True).stdout.split()
    med = {k: statistics.median(v) for k, v in times.items()}
    labels = {"yaml": "rt.load(YAML)", "code": "built in code (loops)", "calls": "one call per line"}
    print(f"{a.vls} VLs, import + build/load + analyze (best), median of {a.runs} whole processes:")
    for k, label in labels.items():
        runs = ", ".join(f"{t:.3f}" for t in times[k])
        print(f"  {label:22}: {med[k]:.3f} s  ({med[k] / med['yaml']:.3f} x YAML; runs: {runs})")
    print(f"build + validate in code {warm[0]} s, read + validate the YAML {warm[1]} s "
          "(one process, warm, median)")


if __name__ == "__main__":
    main()
