"""One ERC-8312 verdict, cold and warm, against the raw-RPC floor and recompute-kit. A script, not
a test.

    .venv/bin/python benchmarks/bench_cli.py [--repeat 7] [--keys 100] [--kit-bin DIR ...]
        [--wheel-venv DIR | --no-wheel]

Setup: a fresh anvil with a HeadroomMeter whose envelope is the ERC-8312 thread's
(0x48e9…b041: portfolio 10000, cap 8000), plus --keys opened envelopes. Measured, best of
--repeat, all in this one run (the fresh processes of (a)-(c) in turns, so that a burst of load
on a shared machine falls on all of them alike):
  (a) cold CLI: ``recompute step 8312/cap-conservation RPC ADDR KEY struct:2:2:1`` (the
      thread's command) as a fresh process, to its exit, three ways:
      - the user's case: the wheel built from this checkout, installed in a fresh virtualenv
        (pip compiles its bytecode), run as that virtualenv's ``recompute`` from outside the
        checkout; built in a temporary folder (about a minute), or give --wheel-venv DIR to
        reuse one (``python -m venv DIR && DIR/bin/pip install -c constraints.txt dist/*.whl``),
        or --no-wheel to skip it;
      - the checkout: ``python -m recompute`` with PYTHONPATH, bytecode cached (in a temporary
        PYTHONPYCACHEPREFIX, so nothing is written into the checkout); the shared virtualenv's
        editable-install finder is imported at interpreter start here, not in the wheel's case;
      - the checkout in the environment as given: with PYTHONDONTWRITEBYTECODE set and no
        ``__pycache__`` in the checkout (as this project's sessions run), every module of the
        checkout is compiled at every start, which is what the earlier figures measured;
  (b) cold floor: a fresh ``python`` sending the verdict's 3 JSON-RPC requests (eth_chainId,
      eth_getBlockByNumber, eth_getProof) with the standard library and exiting; and a bare
      ``python -c pass`` (the interpreter's own start), for both interpreters;
  (c) recompute-kit's ``recompute-step 8312/cap-conservation RPC ADDR KEY struct:2:2:1`` (the
      same argument form: the kit's recipe is the thread's) when ``recompute-step`` and
      ``cast`` are found on PATH or in the --kit-bin folders (repeatable: they are put first on
      the kit's PATH, so its ``python3`` can come from there too), else "skipped". Its verdict
      (exit code, aggregate and cap) is checked against ours before it is timed; a
      disagreement is printed and recorded (``kit_agrees``). To reproduce (nothing of the kit
      is in this repository)::

          git clone https://github.com/trustless-ai/recompute-kit /tmp/kit   # measured: dbb984b
          npm install --prefix /tmp/kit-npm @foundry-rs/cast@1.7.1
          python3 -m venv /tmp/kit-venv   # a python3 without a pyenv shim in front of it
          .venv/bin/python benchmarks/bench_cli.py --kit-bin /tmp/kit/bin \\
              --kit-bin /tmp/kit-npm/node_modules/@foundry-rs/cast-linux-amd64/bin \\
              --kit-bin /tmp/kit-venv/bin

      (the kit's ``recompute-step`` is a bash script of its ``bin/`` that runs ``python3`` and
      ``recompute-storage-proof`` from there and ``cast`` for every keccak; its pip package,
      ``verify/``, is another command and is not needed);
  (d) in process: anchor + step with a fresh source (nothing carried from the run before)
      on a kept-alive connection, against the same 3 requests over one kept-alive session;
  (e) step_many over --keys independent ``struct:`` keys: eth_getProof calls and time,
      against the layout route (``shape=headroom``, the same slots by layout paths).
The last line is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# the checkout's pinned anvil, named (recompute never looks in the working directory:
# docs/executables.md); a value already in the environment wins
os.environ.setdefault("RECOMPUTE_ANVIL", str(ROOT / "node_modules"))

from recompute.core.anchor import anchor_block  # noqa: E402
from recompute.devnet.anvil import Anvil  # noqa: E402
from recompute.devnet.contracts import connect, deploy  # noqa: E402
from recompute.evaluator.job import Job, step, step_many  # noqa: E402
from recompute.layout import load_layout  # noqa: E402
from recompute.recipes.registry import get_recipe  # noqa: E402
from recompute.sources.live import LiveSource  # noqa: E402

ENVELOPE = "0x48e972a25a6ecc83b0dd9c2943b63155ec899b53e10c1f1eb34ebc1d57bcb041"
CAP = "8312/cap-conservation"

FLOOR = """
import json, sys, urllib.request
url, address, key = sys.argv[1:4]
def ask(method, params):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    request = urllib.request.Request(url, body.encode(), {"Content-Type": "application/json"})
    return json.loads(urllib.request.urlopen(request).read())["result"]
ask("eth_chainId", [])
block = ask("eth_getBlockByNumber", ["latest", False])
ask("eth_getProof", [address, [key, key], {"blockHash": block["hash"]}])
"""


def best(repeat: int, fn) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def run(*argv: str, code: int = 0, env: dict | None = None, cwd: Path = ROOT) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, timeout=120,
                          env=env if env is not None else {**os.environ,
                                                           "PYTHONPATH": str(ROOT)})
    if done.returncode != code:
        raise SystemExit(f"{argv[:4]}... exited {done.returncode}: {done.stderr[-300:]}")
    return done.stdout


def checkout_env(cache: Path | None) -> dict:
    """The checkout on PYTHONPATH; bytecode cached under ``cache``, or the environment as
    given (None: with PYTHONDONTWRITEBYTECODE and no __pycache__ in the checkout, as this
    project's sessions run, its own modules are compiled at every start)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if cache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(cache)
    return env


def wheel_venv(work: Path) -> Path:
    """The wheel of this checkout installed in a fresh virtualenv under ``work``."""
    dist = work / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dist),
                    str(ROOT)], check=True, capture_output=True)
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    wheel = next(dist.glob("recompute-*.whl"))
    # without PYTHONPATH: the checkout's recompute.egg-info would read as "already installed"
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "-c",
                    str(ROOT / "constraints.txt"), str(wheel)], check=True, capture_output=True,
                   env=user_env())
    return venv


def user_env() -> dict:
    """An installed command's environment: no checkout on the path, bytecode as pip wrote it."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONPYCACHEPREFIX")}
    return env


def kit_tools(dirs: list[str]) -> dict | None:
    """The kit's environment (--kit-bin folders first on PATH) if it finds both
    ``recompute-step`` and ``cast``, else None."""
    path = os.pathsep.join([*dirs, os.environ.get("PATH", "")])
    if not (shutil.which("recompute-step", path=path) and shutil.which("cast", path=path)):
        return None
    return {**user_env(), "PATH": path}


def kit_verdict(env: dict, argv: list[str], ours: dict) -> bool:
    """Run the kit once and check it says what we say: the exit code (0 GOOD, 1 BAD, 2
    UNVERIFIABLE: the same convention) and the proven aggregate and cap."""
    done = subprocess.run(["recompute-step", *argv], capture_output=True, text=True, env=env,
                          timeout=120)
    said = {name: int(m[1]) for name in ("aggregate", "cap")
            if (m := re.search(rf"^{name}\s+\(base\+\d+\):\s+(\d+)", done.stdout, re.M))}
    exit_codes = {"VERIFIED-GOOD": 0, "VERIFIED-BAD": 1, "UNVERIFIABLE": 2}
    expected = {name: int(ours["evidence"]["derived"][name]) for name in ("aggregate", "cap")}
    agrees = done.returncode == exit_codes[ours["verdict"]] and said == expected
    print(f"recompute-kit: exit {done.returncode}, {said}; recompute: {ours['verdict']}, "
          f"{expected}: {'same verdict' if agrees else 'DISAGREES'}")
    return agrees


def raw_three(session: requests.Session, url: str, address: str, keys: list[str]) -> None:
    def ask(method, params):
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
        reply = session.post(url, data=body, headers={"Content-Type": "application/json"})
        return json.loads(reply.content)["result"]
    ask("eth_chainId", [])
    block = ask("eth_getBlockByNumber", ["latest", False])
    ask("eth_getProof", [address, keys, {"blockHash": block["hash"]}])


def interleaved(repeat: int, runs: dict) -> dict:
    """Best of ``repeat`` for each of ``runs`` (name -> function), taken in turns, so that a
    burst of load on a shared machine falls on every figure alike, not on one."""
    times: dict = {name: [] for name in runs}
    for _ in range(repeat):
        for name, fn in runs.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: min(values) for name, values in times.items()}


def cold(args, work: Path, url: str, address: str, slot: str) -> dict:
    """(a), (b), (c): fresh processes to their exit, measured in turns."""
    argv = [CAP, url, address, ENVELOPE, "struct:2:2:1"]
    checkout = [sys.executable, "-m", "recompute", "step", *argv]
    cached, given = checkout_env(work / "pycache"), checkout_env(None)
    ours = json.loads(run(*checkout, "--json", env=cached))  # also writes the bytecode
    runs = {
        "cold_cli_s": lambda: run(*checkout, env=cached),
        "cold_cli_as_given_s": lambda: run(*checkout, env=given),
        "cold_floor_s": lambda: run(sys.executable, "-c", FLOOR, url, address, slot,
                                    env=cached),
        "python_start_s": lambda: run(sys.executable, "-c", "pass", env=cached),
    }
    skipped = {}
    if args.no_wheel:
        skipped["cold_cli_wheel_s"] = skipped["python_start_wheel_s"] = "skipped"
    else:
        venv = args.wheel_venv or wheel_venv(work)
        if not (venv / "bin" / "recompute").is_file():
            raise SystemExit(f"{venv}: no recompute installed in this virtualenv")
        installed, python = str(venv / "bin" / "recompute"), str(venv / "bin" / "python")
        env = user_env()
        run(installed, "step", *argv, env=env, cwd=work)
        runs["cold_cli_wheel_s"] = lambda: run(installed, "step", *argv, env=env, cwd=work)
        runs["python_start_wheel_s"] = lambda: run(python, "-c", "pass", env=env, cwd=work)
    kit = kit_tools(args.kit_bin)
    if kit is None:
        skipped["recompute_kit_s"] = "skipped"
    else:
        skipped["kit_agrees"] = kit_verdict(kit, argv, ours)
        runs["recompute_kit_s"] = lambda: run("recompute-step", *argv, env=kit, cwd=work)
    return {**interleaved(args.repeat, runs), **skipped}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--keys", type=int, default=100)
    parser.add_argument("--kit-bin", action="append", default=[], metavar="DIR",
                        help="a folder with recompute-kit's recompute-step, or cast (repeat)")
    parser.add_argument("--wheel-venv", type=Path, metavar="DIR",
                        help="a virtualenv with this checkout's wheel installed (else built)")
    parser.add_argument("--no-wheel", action="store_true", help="skip the installed wheel")
    args = parser.parse_args()
    figures: dict = {}
    with Anvil() as node:
        w3 = connect(node.url)
        meter = deploy(w3, "HeadroomMeter")
        keys = [ENVELOPE] + ["0x" + i.to_bytes(32, "big").hex() for i in range(1, args.keys)]
        for i, key in enumerate(keys):
            tx = meter.functions.openEnvelope(bytes.fromhex(key[2:]), w3.eth.accounts[3],
                                              10_000, 8000 + i).transact(
                                                  {"from": w3.eth.accounts[1]})
        w3.eth.wait_for_transaction_receipt(tx)
        address = meter.address
        recipe = get_recipe(CAP)
        layout = load_layout(recipe.layout)
        params = recipe.parse_params({"key": ENVELOPE, "shape": "struct:2:2:1"})
        from recompute.recipes.erc8312 import struct_slots
        slots = [f"0x{s:064x}" for s in struct_slots(bytes.fromhex(ENVELOPE[2:]),
                                                      _shape("struct:2:2:1"))]
        with tempfile.TemporaryDirectory(prefix="bench-cli-") as work:
            figures.update(cold(args, Path(work), node.url, address, slots[0]))

        source = LiveSource(node.url)
        addr = bytes.fromhex(address[2:])

        def fresh() -> LiveSource:
            """A new source (nothing kept from an earlier verdict: recompute.core.caching is per
            source) on the same kept-alive connection, as the raw floor has."""
            new = LiveSource(node.url)
            new.client = source.client
            new._chain_id = None
            return new

        def in_process():
            block = anchor_block([fresh()], block="latest")
            outcome = step(recipe, params, block, addr, layout)
            assert outcome.evidence["derived"]["cap"] == "8000"

        session = requests.Session()
        calls = source.calls
        in_process()
        figures["in_process_calls"] = source.calls - calls
        figures["in_process_s"] = best(args.repeat * 3, in_process)
        figures["raw_three_calls_s"] = best(args.repeat * 3,
                                            lambda: raw_three(session, node.url, address, slots))

        def many(shape: str, layout_name: str):
            chosen = load_layout(layout_name)
            jobs = [Job(recipe, recipe.parse_params({"key": k, "shape": shape}), addr, chosen)
                    for k in keys]

            def go():
                block = anchor_block([fresh()], block="latest")
                outcomes = step_many(block, jobs)
                assert all(o.evidence["derived"]["within_cap"] for o in outcomes)
            block = anchor_block([fresh()], block="latest")
            before = source.calls
            step_many(block, jobs)
            return source.calls - before, best(args.repeat, go)

        figures["many_slots_proofs"], figures["many_slots_s"] = many("struct:2:2:1", recipe.layout)
        figures["many_layout_proofs"], figures["many_layout_s"] = many("headroom",
                                                                       "meter-headroom")

    report_cold(figures, args.repeat)
    print(f"(d) in process: verdict {figures['in_process_s'] * 1000:.2f} ms "
          f"({figures['in_process_calls']} calls), 3 raw calls "
          f"{figures['raw_three_calls_s'] * 1000:.2f} ms, ratio "
          f"{figures['in_process_s'] / figures['raw_three_calls_s']:.2f} (goal <= 1.3)")
    print(f"(e) {args.keys} struct keys: {figures['many_slots_proofs']} eth_getProof, "
          f"{figures['many_slots_s'] * 1000:.0f} ms; layout route "
          f"{figures['many_layout_proofs']} eth_getProof, "
          f"{figures['many_layout_s'] * 1000:.0f} ms")
    figures["in_process_over_raw"] = round(figures["in_process_s"] /
                                           figures["raw_three_calls_s"], 2)
    print(json.dumps({k: round(v, 4) if isinstance(v, float) else v
                      for k, v in figures.items()}))


def _ms(value) -> str:
    return "skipped" if value == "skipped" else f"{value * 1000:5.0f} ms"


def report_cold(figures: dict, repeat: int) -> None:
    """Print (a)-(c) and add the ratios: the kit over us (goal >= 2), us over the floor."""
    print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; best of {repeat}")
    wheel, kit = figures["cold_cli_wheel_s"], figures["recompute_kit_s"]
    print(f"(a) cold CLI verdict, installed wheel  {_ms(wheel)}  (python start alone "
          f"{_ms(figures['python_start_wheel_s']).strip()})")
    print(f"    cold CLI verdict, checkout         {_ms(figures['cold_cli_s'])}  (python start "
          f"alone {_ms(figures['python_start_s']).strip()})")
    dont_write = os.environ.get("PYTHONDONTWRITEBYTECODE") or "unset"
    print(f"    checkout, environment as given     {_ms(figures['cold_cli_as_given_s'])}  "
          f"(PYTHONDONTWRITEBYTECODE {dont_write})")
    print(f"(b) cold raw 3 requests                {_ms(figures['cold_floor_s'])}")
    kit_text = ("skipped (recompute-step or cast not found: --kit-bin)" if kit == "skipped"
                else _ms(kit) + ("" if figures["kit_agrees"] else "  (VERDICT DIFFERS)"))
    print(f"(c) recompute-kit recompute-step       {kit_text}")
    figures["cli_over_floor"] = round(figures["cold_cli_s"] / figures["cold_floor_s"], 2)
    print(f"cold CLI (checkout) / cold floor = {figures['cli_over_floor']}")
    if kit != "skipped":
        figures["kit_over_cli"] = round(kit / figures["cold_cli_s"], 2)
        line = f"recompute-kit / cold CLI: checkout {figures['kit_over_cli']}x"
        if wheel != "skipped":
            figures["kit_over_cli_wheel"] = round(kit / wheel, 2)
            line += f", installed wheel {figures['kit_over_cli_wheel']}x"
        print(line + " (goal >= 2)")


def _shape(text: str):
    from recompute.recipes.erc8312 import parse_shape
    return parse_shape(text)


if __name__ == "__main__":
    main()
