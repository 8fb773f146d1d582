"""Evidence and outcome assembly: what one check consumed at one block (:class:`Trace`), and
the outcome drawn from its derivation (docs/design.md §Recipes, §Verdicts).

The last stage of the trust flow (docs/design.md §Trust flow): everything here is made from
values already proven (the trace's entries, the subject account) and the recipe's derivation;
nothing here asks a node, except ``--compare-views``, which only adds findings. The fast path
(recompute.evaluator.job) and the reference evaluator (recompute.evaluator.reference) assemble
their outcomes here alike.
"""

from __future__ import annotations

from typing import Any, Protocol, cast

from recompute.core.anchor import AnchoredBlock
from recompute.core.errors import OptionError, Unverifiable
from recompute.core.jsontext import canonical_json, json_line
from recompute.core.keccak import EMPTY_CODE_HASH, keccak256
from recompute.core.outcome import Outcome, block_evidence
from recompute.core.prover import ProofStats, ProvenAccount
from recompute.core.verdict import Verdict
from recompute.evaluator.digest import ReadGroup, evidence_digest
from recompute.evaluator.job_record import Job, normalise
from recompute.recipes.base import Recipe
from recompute.recipes.outputs import parse_int_text
from recompute.recipes.plan import Derivation, Params


class Trace:
    """Everything the verifier consumed, for the evidence (a plain class: one is made per
    check per block)."""

    __slots__ = ("reads", "read_groups", "logs", "blocks_walked", "receipts_proven", "carried",
                 "stats")

    def __init__(self) -> None:
        self.reads: list[dict[str, Any]] = []  # {address, slot, value, path}
        # the kept entry lists ``reads`` was extended with, in order (the digest's parts: made
        # once per proven path); they cover ``reads`` only if nothing else was added to it
        self.read_groups: list[ReadGroup] = []
        self.logs: list[dict[str, Any]] = []
        self.blocks_walked = 0
        self.receipts_proven = 0
        self.carried: list[dict[str, Any]] = []  # reads and scans kept from a block below
        self.stats = ProofStats()


class BlockParts:
    """What every outcome at one block says of the block, made once per block: the evidence's
    block fields and the block's canonical text for the digest."""

    __slots__ = ("evidence", "block_text")

    def __init__(self, block: AnchoredBlock):
        self.evidence = block_evidence(block)
        self.block_text = canonical_json(self.evidence["block"])


def subject_account(block: AnchoredBlock, address: bytes,
                    account: ProvenAccount) -> ProvenAccount:
    """The recipe's contract at the pinned block, which must be a contract: an account proven
    absent, or without code (a mistyped address, an externally owned account, a block before
    deployment) reads as zeros everywhere, so no verdict can be drawn from it:
    ``no-contract``."""
    if not account.exists or account.code_hash == EMPTY_CODE_HASH:
        what = "does not exist" if not account.exists else "has no code"
        raise Unverifiable("no-contract", f"account 0x{address.hex()} {what} at block "
                           f"{block.number} (proven against its stateRoot): check the address "
                           "and that the contract was deployed by then")
    return account


def outcome(block: AnchoredBlock, job: Job, trace: Trace, account: ProvenAccount,
            derivation: Derivation, parts: BlockParts | None = None) -> Outcome:
    """The outcome of ``job`` at ``block``: its derivation (or its expectations) decides the
    verdict; the evidence lists what ``trace`` consumed; ``account`` is the subject account
    proven at ``block`` (UNVERIFIABLE ``no-contract`` if it holds no code)."""
    recipe, params, address, layout = job.recipe, job.params, job.address, job.layout
    expect, compare_views = job.expect, job.compare_views
    derived = derivation.derived
    subject_account(block, address, account)
    parts = parts or BlockParts(block)
    evidence: dict[str, Any] = {
        **parts.evidence,
        "recipe": recipe.name,
        "params": dict(job.evidence_params),
        "contract": job.contract_text,
        "layout": layout.name,
        "reads": trace.reads,
        "logs": trace.logs,
        "proof_requests": trace.stats.requests,
        "receipts_proven": trace.receipts_proven,
        "blocks_walked": trace.blocks_walked,
        **({"carried": trace.carried} if trace.carried else {}),
        "predicate": derivation.predicate,
        "derived": {k: json_value(v) for k, v in derived.items()},
        "findings": list(derivation.findings),
        **({"bounds": list(derivation.bounds)} if derivation.bounds else {}),
    }
    recorded = layout.runtime_code_hash
    if recorded is not None and recorded != account.code_hash:
        evidence["findings"].append({
            "finding": "code-hash-differs",
            "detail": "the proven code is not the code this layout was generated for",
            "layout_code_hash": "0x" + recorded.hex(),
            "proven_code_hash": "0x" + account.code_hash.hex()})
    if compare_views:
        evidence["views"] = compare_with_views(recipe, params, block, address, derived)
        for view in evidence["views"]:
            if view["agrees"] is False:
                evidence["findings"].append({"finding": "view-disagrees", **view})
    if expect:
        results = []
        for key, text in expect.items():
            if key not in derived:
                raise OptionError(
                    "{expect} {key}: {name} derives no {key!r} (it derives: {derived})",
                    ("expect",), key=key, name=recipe.name, derived=", ".join(derived))
            got = normalise(derived[key])
            results.append({"key": key, "expected": text, "derived": got,
                            "holds": expectation_holds(derived[key], text)})
        evidence["expectations"] = results
        holds = all(r["holds"] for r in results)
        detail = "" if holds else "; ".join(
            f"{r['key']} is {r['derived']}, expected {r['expected']}" for r in results
            if not r["holds"])
    else:
        holds = derivation.holds
        detail = "" if holds else (derivation.failed or _found(derivation))
    evidence["evidence_digest"] = evidence_digest(parts.block_text, evidence["reads"],
                                                  evidence["logs"], evidence["derived"],
                                                  trace.read_groups)
    values = {k: typed_value(v) for k, v in derived.items()}
    if holds:
        return Outcome(Verdict.GOOD, "ok", evidence, values=values)
    return Outcome(Verdict.BAD, "predicate-failed", evidence, detail, values)


def _found(derivation: Derivation) -> str:
    """A BAD verdict's detail when the recipe says no more: what it derived, then what
    should have held. Each value as JSON writes it (true, {"0x…": "40"}), a text bare."""
    found = ", ".join(f"{k} = {_json_text(json_value(v))}" for k, v in derivation.derived.items())
    return f"found {found}; healthy means {derivation.predicate}"


def _json_text(value: object) -> str:
    return value if isinstance(value, str) else json_line(value)


def expectation_holds(value: object, text: str) -> bool:
    """Does a derived value equal the expected text? Integers compare as numbers (decimal or
    0x-hex: ``0x69113928`` is ``1762736424``), booleans as true/false, the rest as text."""
    if isinstance(value, bool):
        return normalise(value) == text.strip().lower()
    if isinstance(value, int):
        return bool(parse_int_text(text) == value)
    return normalise(value) == _normal_text(text)


def _normal_text(text: str) -> str:
    lowered = text.strip()
    if lowered.lower() in ("true", "false"):
        return lowered.lower()
    if lowered.startswith(("0x", "0X")):
        return lowered.lower()
    if lowered.lstrip("-").isdigit():
        return str(int(lowered))
    return lowered


def json_value(value: Any) -> Any:
    """A derived value as the evidence writes it: integers as decimal text, bytes as 0x-hex,
    containers element by element."""
    kind = value.__class__  # the common kinds first (exactly str, exactly int: not bool);
    if kind is str:  # an identity test, not isinstance: measured on the hot path
        return value
    if kind is int:
        return str(value)
    if isinstance(value, bytes):
        return "0x" + value.hex()
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, dict):
        return {k: json_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_value(v) for v in value]
    return value


def typed_value(value: Any) -> Any:
    """A derived value as its JSON type for the library (:attr:`Outcome.derived`): as
    :func:`json_value` writes it, but an integer stays an ``int``."""
    if isinstance(value, bool) or value is None or isinstance(value, int | str):
        return value
    if isinstance(value, bytes):
        return "0x" + value.hex()
    if isinstance(value, dict):
        return {k: typed_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [typed_value(v) for v in value]
    return value


class _Calls(Protocol):
    """A source that runs ``eth_call`` (the views are the node's word: findings only)."""

    def call(self, to: bytes, data: bytes, block_hash: bytes) -> bytes: ...


def compare_with_views(recipe: Recipe, params: Params, block: AnchoredBlock,
                       address: bytes, derived: dict[str, Any]) -> list[dict[str, Any]]:
    """Call each view the recipe names at the same block; record agreement per value."""
    from eth_abi.abi import decode as abi_decode  # only --compare-views needs the ABI codec
    from eth_abi.abi import encode as abi_encode

    out: list[dict[str, Any]] = []
    for check in recipe.views(params):
        selector = keccak256(check.signature.encode())[:4]
        data = selector + abi_encode(list(check.arg_types), list(check.args))
        try:
            raw = cast(_Calls, block.source).call(address, data, block.hash)
            returned = tuple(abi_decode(list(check.returns), raw))
        except Unverifiable as exc:  # the node would not call it: nothing was compared
            out.append({"view": check.signature, "compared": False, "agrees": None,
                        "skipped": exc.reason, "detail": exc.detail[:160]})
            continue
        except Exception as exc:  # a view that reverts or returns garbage is itself a finding
            out.append({"view": check.signature, "agrees": False, "error": str(exc)[:160]})
            continue
        for name, (view_value, derived_value) in check.compare(returned, derived).items():
            out.append({
                "view": check.signature,
                "value": name,
                "view_says": json_value(view_value),
                "storage_says": json_value(derived_value),
                "compared": True,
                "agrees": normalise(view_value) == normalise(derived_value),
            })
    return out
