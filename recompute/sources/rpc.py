"""JSON-RPC transport: one endpoint, raw answers, failures mapped to reason codes.

Everything this module returns is *untrusted*: plain JSON as the node sent it. It only
decides what kind of failure a failure is (unreachable, error, pruned state, malformed),
so that the verdict can say so. web3.py's HTTPProvider carries the requests; its
formatting middleware is bypassed on purpose (we verify the raw bytes ourselves, and
formatting 2,000 proofs through AttributeDicts costs more than verifying them).
"""

from __future__ import annotations

import re
from urllib.parse import urlparse

import requests
from web3 import HTTPProvider

from recompute.core.errors import Unverifiable, UsageError

# Messages nodes give when the state of an old block is gone (geth, erigon, reth, nethermind,
# anvil). Matched case-insensitively; anything else is a plain `rpc-error`.
_PRUNED = re.compile(
    r"missing trie node|pruned|state.*not available|state.*unavailable|historical state|"
    r"not archive|state histories|required historical state|no state|state root not found|"
    r"state for block .* is not available|failed to get state",
    re.IGNORECASE,
)
_UNKNOWN_BLOCK = re.compile(
    r"header not found|unknown block|block not found|block .* not found|resource not found|"
    r"could not find block|invalid block number",
    re.IGNORECASE,
)


def check_url(url: str) -> str:
    """An http(s) URL with a host, or a one-line UsageError."""
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise UsageError(f"--rpc {url!r} is not an http(s) URL (e.g. http://127.0.0.1:8545)")
    try:
        parsed.port  # noqa: B018 -- raises ValueError on a bad port
    except ValueError:
        raise UsageError(f"--rpc {url!r} has an invalid port") from None
    return url


class RpcClient:
    """One endpoint. :meth:`request` returns the ``result`` member or raises Unverifiable."""

    def __init__(self, url: str, timeout: float = 30.0):
        self.url = check_url(url)
        self._provider = HTTPProvider(
            url, request_kwargs={"timeout": timeout}, exception_retry_configuration=None
        )
        self.calls = 0  # requests sent, for evidence and benchmarks

    def request(self, method: str, params: list):
        self.calls += 1
        try:
            reply = self._provider.make_request(method, params)
        except (requests.ConnectionError, requests.Timeout) as exc:
            raise Unverifiable(
                "rpc-unreachable",
                f"{self.url} did not answer {method}: {_short(exc)}; check that the node runs "
                "and the URL is right",
            ) from None
        except requests.HTTPError as exc:
            raise Unverifiable("rpc-error", f"{self.url} {method}: HTTP {_short(exc)}") from None
        except (ValueError, TypeError) as exc:  # body is not JSON
            raise Unverifiable(
                "rpc-malformed", f"{self.url} {method}: answer is not JSON ({_short(exc)})"
            ) from None
        except requests.RequestException as exc:
            raise Unverifiable("rpc-unreachable", f"{self.url} {method}: {_short(exc)}") from None
        if not isinstance(reply, dict):
            raise Unverifiable("rpc-malformed", f"{self.url} {method}: answer is not an object")
        if "error" in reply and reply["error"] is not None:
            raise classify_error(self.url, method, reply["error"])
        if "result" not in reply:
            raise Unverifiable("rpc-malformed", f"{self.url} {method}: answer has no result")
        return reply["result"]


# anvil: "BlockOutOfRangeError: block height is 301 but requested was 1" for both a pruned
# block (below the height) and a future one (above it).
_OUT_OF_RANGE = re.compile(r"block height is (\d+) but requested was (\d+)")


def classify_error(url: str, method: str, error: object) -> Unverifiable:
    message = error.get("message", "") if isinstance(error, dict) else str(error)
    message = str(message)[:200]
    out_of_range = _OUT_OF_RANGE.search(message)
    if out_of_range and int(out_of_range.group(2)) > int(out_of_range.group(1)):
        return Unverifiable("block-unknown", f"{url} does not have that block yet ({message})")
    if out_of_range:
        return Unverifiable(
            "state-unavailable",
            f"{url} no longer has that block's state ({method}: {message}); "
            "use an archive node or a more recent block",
        )
    if _PRUNED.search(message):
        return Unverifiable(
            "state-unavailable",
            f"{url} no longer has that block's state ({method}: {message}); "
            "use an archive node or a more recent block",
        )
    if _UNKNOWN_BLOCK.search(message):
        return Unverifiable("block-unknown", f"{url} does not know that block ({message})")
    return Unverifiable("rpc-error", f"{url} {method}: {message}")


def _short(exc: Exception) -> str:
    text = str(exc)
    reason = re.search(r"\[Errno -?\d+\] [^'\")]*|Read timed out|timed out", text)
    return reason.group(0) if reason else text.splitlines()[0][:160] if text else type(exc).__name__
