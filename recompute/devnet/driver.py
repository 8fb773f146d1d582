"""Drive a devnet through a scripted, deterministic history.

Every transaction is mined in its own block at a timestamp the script states
(``evm_setNextBlockTimestamp``), from anvil's deterministic dev accounts, so the same script
gives the same block hashes on every run. A history module (``history_amm``, ...) calls
:meth:`Driver.deploy`, :meth:`Driver.tx`, :meth:`Driver.tx_reverting` and
:meth:`Driver.moment`, and records what a verifier needs to know (subjects, keys, roots) in
its manifest section (:meth:`Driver.section`).

The driver is a chain *writer*; nothing it returns is trusted by the verifier.
"""

from __future__ import annotations

from typing import Any

from eth_hash.auto import keccak
from eth_typing import ChecksumAddress
from web3 import Web3
from web3.contract import Contract
from web3.contract.contract import ContractConstructor, ContractFunction
from web3.types import RPCEndpoint, TxParams, TxReceipt, Wei

from recompute.devnet.contracts import load_artifact

Sendable = ContractFunction | ContractConstructor  # what a transaction of the script calls


class HistoryError(RuntimeError):
    """The scripted history did not go as written (a tx reverted, a timestamp went back)."""


class Driver:
    def __init__(self, w3: Web3, start_timestamp: int, block_interval: int = 12):
        self.w3 = w3
        self.accounts: list[str] = list(w3.eth.accounts)
        self.now = start_timestamp  # timestamp of the last block mined by the script
        self.block_interval = block_interval
        self.contracts: dict[str, ChecksumAddress] = {}
        self.moments: dict[str, dict[str, Any]] = {}
        self.sections: dict[str, dict[str, Any]] = {}
        # what one history hands to its own extension (``extend``) run after every history
        self.state: dict[str, Any] = {}

    # ---- time -------------------------------------------------------------------------

    def _next_time(self, at: int | None) -> int:
        when = self.now + self.block_interval if at is None else at
        if when <= self.now:
            raise HistoryError(f"timestamp {when} is not after the last block's {self.now}")
        return when

    def mine(self, at: int | None = None) -> int:
        """Mine an empty block (at ``at``, default now + interval); returns its number."""
        when = self._next_time(at)
        self.w3.provider.make_request(RPCEndpoint("evm_setNextBlockTimestamp"), [when])
        self.w3.provider.make_request(RPCEndpoint("evm_mine"), [])
        self.now = when
        return self.w3.eth.block_number

    # ---- writing ----------------------------------------------------------------------

    def deploy(self, name: str, *args: Any, alias: str | None = None, sender: str | None = None,
               at: int | None = None, libraries: dict[str, str] | None = None,
               directory: str | None = None, value: int = 0) -> Contract:
        """Deploy artifact ``name`` (from ``directory``, default the bundled artifacts; with
        ``value`` wei); the manifest lists it as ``alias`` (default ``name``).

        ``libraries`` maps a library's artifact name to its deployed address; its link
        placeholders (``__$<34 hex>$__``, solc's) are resolved from the artifact's link
        references.
        """
        artifact = load_artifact(name, directory)
        bytecode = _link(artifact, libraries or {}, self.contracts)
        factory = self.w3.eth.contract(abi=artifact["abi"], bytecode=bytecode)
        receipt = self._send(factory.constructor(*args), sender, at, f"deploy {name}",
                             value=value)
        address = receipt["contractAddress"]
        if address is None:
            raise HistoryError(f"deploy {name}: the receipt names no contract")
        self.contracts[alias or name] = address
        return self.w3.eth.contract(address=address, abi=artifact["abi"])

    def contract(self, name: str) -> Contract:
        """The deployed contract listed as ``name``, bound to its artifact's ABI (an alias
        names the artifact it was deployed from: ``name`` must be both)."""
        return self.w3.eth.contract(address=self.contracts[name],
                                    abi=load_artifact(name)["abi"])

    def tx(self, call: Sendable, *, sender: str | None = None, at: int | None = None,
           gas: int | None = None, what: str = "", value: int = 0) -> TxReceipt:
        """Send ``call`` (a bound contract function) in its own block; it must succeed.

        Give ``gas`` for a call that only succeeds from ``at`` on: anvil estimates gas at the
        previous block's timestamp, so an estimate would revert where the real block does not.
        """
        return self._send(call, sender, at, what or _describe(call), gas, value)

    def tx_reverting(self, call: Sendable, *, sender: str | None = None, at: int | None = None,
                     gas: int = 1_000_000, what: str = "") -> TxReceipt:
        """Put a transaction on chain that reverts (status 0), e.g. a refused draw."""
        when = self._next_time(at)
        self.w3.provider.make_request(RPCEndpoint("evm_setNextBlockTimestamp"), [when])
        tx_hash = call.transact({"from": sender or self.accounts[0], "gas": gas})
        receipt = self.w3.eth.wait_for_transaction_receipt(tx_hash)
        self.now = when
        if receipt["status"] != 0:
            raise HistoryError(f"{what or _describe(call)} was meant to revert but succeeded")
        return receipt

    def _send(self, call: Sendable, sender: str | None, at: int | None, what: str,
              gas: int | None = None, value: int = 0) -> TxReceipt:
        when = self._next_time(at)
        self.w3.provider.make_request(RPCEndpoint("evm_setNextBlockTimestamp"), [when])
        options: TxParams = {"from": sender or self.accounts[0]}
        if value:
            options["value"] = Wei(value)
        if gas is not None:
            options["gas"] = gas
        try:
            tx_hash = call.transact(options)
        except Exception as exc:  # web3 estimates gas first: a revert surfaces here
            raise HistoryError(f"{what} reverted at {when}: {exc}") from None
        receipt = self.w3.eth.wait_for_transaction_receipt(tx_hash)
        self.now = when
        if receipt["status"] != 1:
            raise HistoryError(f"{what} failed at {when}")
        return receipt

    # ---- recording --------------------------------------------------------------------

    def moment(self, label: str) -> dict[str, Any]:
        """Name the latest block (``amm.after-cycle-1``); labels are unique."""
        if label in self.moments:
            raise HistoryError(f"moment {label!r} is named twice")
        block = self.w3.eth.get_block("latest")
        self.moments[label] = {
            "number": block["number"],
            "hash": block["hash"].to_0x_hex(),
            "timestamp": block["timestamp"],
        }
        return self.moments[label]

    def section(self, name: str) -> dict[str, Any]:
        """The manifest section a history fills (``amm``, ``meters``, ``swarm``)."""
        return self.sections.setdefault(name, {})


def _describe(call: Sendable) -> str:
    return call.fn_name if isinstance(call, ContractFunction) else type(call).__name__


def _link(artifact: dict[str, Any], libraries: dict[str, str],
          deployed: dict[str, ChecksumAddress]) -> str:
    bytecode: str = artifact["bytecode"]
    if "__$" not in bytecode:
        return bytecode

    for library, address in libraries.items():
        address = deployed.get(address, address)
        # solc's placeholder: __$ + first 34 hex chars of keccak256("source:Library") + $__
        for source in {artifact["sourceName"], *_sources_of(library)}:
            fq = f"{source}:{library}"
            placeholder = "__$" + keccak(fq.encode()).hex()[:34] + "$__"
            bytecode = bytecode.replace(placeholder, address.removeprefix("0x").lower())
    if "__$" in bytecode:
        raise HistoryError(f"{artifact['contractName']}: unlinked library placeholder remains")
    return bytecode


def _sources_of(library: str) -> set[str]:
    try:
        return {load_artifact(library)["sourceName"]}
    except FileNotFoundError:
        return set()
