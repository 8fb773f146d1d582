"""A small JSON-RPC node on 127.0.0.1 that answers from recorded go-ethereum exchanges.

The execution-apis fixtures (bundled: ``recompute/data/fixtures/execution-apis``) are real
answers of geth on a real test chain. This server replays them over real HTTP so that
recompute's whole
path (web3 transport, anchoring, proof verification) runs against real data with no
chain: headers come from ``chain.rlp`` and the recorded genesis block, proofs from the
recorded ``eth_getProof`` answers, indexed by (account, block) and by slot, so a request
for any subset of recorded slots is answered the way geth answered them.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import rlp
from rlp.codec import consume_length_prefix

from recompute.core.header import Header
from recompute.core.jsontext import json_line
from recompute.data import FIXTURE_CHAIN


def read_exchanges(path: Path) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """The (request, response) pairs of one ``.io`` file."""
    pairs, request = [], None
    for line in path.read_text().splitlines():
        if line.startswith(">> "):
            request = json.loads(line[3:])
        elif line.startswith("<< ") and request is not None:
            pairs.append((request, json.loads(line[3:])))
            request = None
    return pairs


def read_chain(path: Path) -> list[Header]:
    """Headers of the blocks in a ``chain.rlp`` file (concatenated RLP blocks)."""
    data = path.read_bytes()
    headers, pos = [], 0
    while pos < len(data):
        _, _, length, start = consume_length_prefix(data, pos)
        block = rlp.decode(data[pos : start + length], strict=True)
        headers.append(Header.from_rlp_items(block[0]))
        pos = start + length
    return headers


class FixtureChain:
    def __init__(self, directory: Path):
        self.directory = Path(directory)
        genesis = read_exchanges(self.directory / "eth_getBlockByNumber" / "get-genesis.io")
        headers = [Header.from_rpc(genesis[0][1]["result"])]
        headers += read_chain(self.directory / "chain.rlp")
        self.by_number = {h.number: h for h in headers}
        self.by_hash = {h.hash: h for h in headers}
        self.latest = max(self.by_number)
        self.chain_id = read_exchanges(self.directory / "eth_chainId" / "get-chain-id.io")[0][1][
            "result"
        ]
        # eth_getBlockReceipts answers by block number, as geth gave them
        self.receipts: dict[int, list[Any]] = {}
        for name in ("get-block-receipts-n.io", "get-block-receipts-latest.io"):
            for _, response in read_exchanges(self.directory / "eth_getBlockReceipts" / name):
                result = response.get("result")
                if result:
                    self.receipts[int(result[0]["blockNumber"], 16)] = result
        # (address, block number) -> recorded account answer; slots -> storageProof entry
        self.accounts: dict[tuple[str, int | None], dict[str, Any]] = {}
        self.slots: dict[tuple[str, int | None], dict[int, dict[str, Any]]] = {}
        for io in sorted((self.directory / "eth_getProof").glob("*.io")):
            for request, response in read_exchanges(io):
                result = response.get("result")
                if not result:
                    continue
                params = request["params"]
                number = self.resolve(params[2] if len(params) > 2 else "latest")
                key = (params[0].lower(), number)
                self.accounts.setdefault(key, result)
                for entry in result.get("storageProof", []):
                    self.slots.setdefault(key, {})[int(entry["key"], 16)] = entry

    def resolve(self, ref: Any) -> int | None:
        if isinstance(ref, dict):
            ref = ref.get("blockHash") or ref.get("blockNumber")
        if ref in (None, "latest", "safe", "finalized"):
            return self.latest
        if ref == "earliest":
            return 0
        if isinstance(ref, str) and len(ref) == 66:
            header = self.by_hash.get(bytes.fromhex(ref[2:]))
            return header.number if header else None
        return int(ref, 16)

    def answer(self, method: str, params: list[Any]) -> Any:
        if method == "eth_chainId":
            return self.chain_id
        if method == "eth_blockNumber":
            return hex(self.latest)
        if method in ("eth_getBlockByNumber", "eth_getBlockByHash"):
            number = self.resolve(params[0])
            header = self.by_number.get(number) if number is not None else None
            return header.to_rpc() if header else None
        if method == "eth_getBlockReceipts":
            number = self.resolve(params[0])
            if number not in self.receipts:
                raise LookupError(f"no recorded receipts for block {params[0]}")
            return self.receipts[number]
        if method == "eth_getProof":
            number = self.resolve(params[2] if len(params) > 2 else "latest")
            if number is None:
                raise LookupError("header not found")
            key = (params[0].lower(), number)
            if key not in self.accounts:
                raise LookupError(f"no recorded proof for {params[0]} at block {number}")
            result = {k: v for k, v in self.accounts[key].items() if k != "storageProof"}
            recorded = self.slots.get(key, {})
            entries = []
            for slot_text in params[1]:
                slot = int(slot_text, 16)
                if slot not in recorded:
                    raise LookupError(f"no recorded proof for slot {slot_text}")
                entries.append(recorded[slot])
            result["storageProof"] = entries
            return result
        raise LookupError(f"method {method} is not recorded")


class FixtureNode:
    """``with FixtureNode(dir) as node: node.url`` serves the recorded chain."""

    def __init__(self, directory: Path, port: int = 0):
        self.chain = FixtureChain(directory)
        self.port = port  # 0: any free port
        self.requests = 0
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the fixture node is not started")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def reply(self, call: dict[str, Any]) -> dict[str, Any]:
        """The JSON-RPC reply to one call."""
        reply = {"jsonrpc": "2.0", "id": call.get("id")}
        try:
            reply["result"] = self.chain.answer(call["method"], call.get("params", []))
        except (LookupError, ValueError, IndexError) as exc:
            reply["error"] = {"code": -32000, "message": str(exc)}
        return reply

    def start(self) -> FixtureNode:
        node = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                node.requests += 1
                # a JSON-RPC batch is answered as geth answers one: a list of the replies
                replies = ([node.reply(call) for call in body] if isinstance(body, list)
                           else node.reply(body))
                data = json_line(replies).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FixtureNode:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main() -> None:  # pragma: no cover - a convenience for the docs' worked example

    parser = argparse.ArgumentParser(description="Serve the recorded go-ethereum fixtures.")
    parser.add_argument("--dir", default=str(FIXTURE_CHAIN))
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: free)")
    args = parser.parse_args()
    with FixtureNode(Path(args.dir), args.port) as node:
        print(node.url, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":  # pragma: no cover
    main()
