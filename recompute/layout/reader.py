"""Read planning: which slots to prove, round after round, and the typed values they give.

Pure: a :class:`ReadPlan` never talks to a node. It says which slots it still needs
(:meth:`ReadPlan.next_round`), is handed their (proven) values (:meth:`ReadPlan.feed`), and
finally decodes (:meth:`ReadPlan.results`). Every slot one round needs, for all paths
together, is asked in that round, so the caller makes one proof request per round
(docs/design.md §Recipes: read plan → prove → derive).

Most paths need one round: every slot is statically derivable from the path, and an index
into a dynamic array is checked against the length read in the same round. More rounds are
needed only where a value decides which slots come next: a whole dynamic array (length,
then elements) and a long bytes/string (length word, then ``ceil(len/32)`` data slots).
Bound checks run before any such dependent round, so a path never follows a slot beyond a
proven length.

Each path is read by a generator that yields the set of slots it needs next; a struct or an
array runs its parts side by side (:func:`_gather`), so independent parts share rounds.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from recompute.core.errors import UsageError
from recompute.layout.decode import (
    as_text,
    bytes_header,
    decode_value,
    extract,
    long_bytes,
    short_bytes,
)
from recompute.layout.decode import to_json as value_to_json
from recompute.layout.descriptor import Layout
from recompute.layout.resolve import Location, hex32, resolve
from recompute.layout.slots import data_slot, offset_slot
from recompute.layout.types import (
    BytesType,
    DynamicArrayType,
    MappingType,
    StaticArrayType,
    StructType,
    TypeInfo,
    ValueType,
    array_slots,
    element_location,
)

WORD = 1 << 256
DEFAULT_MAX_SLOTS = 1 << 16  # per path: refuse to expand a whole read beyond this
# A type may contain itself through a dynamic array (``struct S { S[] children; }``), so how
# deep a whole read nests is decided by proven storage, which a contract's author controls.
MAX_DEPTH = 32

Need = Generator[set[int], None, Any]  # a reader: yields slots it needs, returns its value


class IndexOutOfBounds(UsageError):
    """An index at or beyond the proven length of a dynamic array."""

    def __init__(self, path: str, array: str, index: int, length: int, length_slot: int):
        super().__init__(
            f"{path}: index {index} is out of bounds: the proven length of {array} is {length} "
            f"(slot {hex32(length_slot)})"
        )
        self.path, self.array, self.index, self.length = path, array, index, length
        self.length_slot = length_slot


@dataclass
class ReadResult:
    """The decoded value at ``path`` and every slot it was read from (in order of use)."""

    path: str
    type_label: str
    value: Any
    slots: list[int]
    location: Location = field(repr=False)
    slot_paths: dict[int, str] = field(default_factory=dict, repr=False)
    _layout: Layout | None = field(default=None, repr=False)
    truncated: dict[str, int] = field(default_factory=dict)  # array path -> proven length

    def to_json(self) -> dict[str, Any]:
        loc = self.location
        if loc.length_of is not None or self._layout is None:
            value = str(self.value)
        else:
            value = value_to_json(self._layout, loc.type, self.value)
        out = {
            "path": self.path,
            "type": self.type_label,
            "value": value,
            "slots": [hex32(s) for s in self.slots],
            "slot_paths": {hex32(s): p for s, p in self.slot_paths.items()},
        }
        if self.truncated:  # only the first max_elements of these arrays were read
            out["truncated"] = {name: str(length) for name, length in self.truncated.items()}
        return out


class _Ctx:
    """What one path's readers share: the plan's known words and this path's slot record."""

    def __init__(self, layout: Layout, known: dict[int, int], path: str, max_slots: int,
                 max_elements: int | None = None):
        self.layout = layout
        self.known = known
        self.path = path
        self.max_slots = max_slots
        self.max_elements = max_elements
        self.used: dict[int, str] = {}
        self.truncated: dict[str, int] = {}

    def need(self, slots: Iterable[int], name: str) -> Generator[set[int], None, None]:
        wanted = set(slots)
        for s in sorted(wanted):
            self.used.setdefault(s, name)
        missing = {s for s in wanted if s not in self.known}
        if missing:
            yield missing

    def word(self, slot: int) -> int:
        return self.known[slot]

    def budget(self, n: int, what: str) -> None:
        if n > self.max_slots:
            raise UsageError(
                f"{self.path}: {what} spans {n} slots, more than the {self.max_slots} one path "
                "may read; read it piecewise (by index) instead"
            )


def _gather(gens: list[Need]) -> Generator[set[int], None, list[Any]]:
    """Run readers side by side: each round asks the union of what they still need."""
    results: list[Any] = [None] * len(gens)
    pending: dict[int, set[int]] = {}
    for i, g in enumerate(gens):
        try:
            pending[i] = next(g)
        except StopIteration as done:
            results[i] = done.value
    while pending:
        yield set().union(*pending.values())
        nxt: dict[int, set[int]] = {}
        for i in pending:
            try:
                nxt[i] = gens[i].send(None)
            except StopIteration as done:
                results[i] = done.value
        pending = nxt
    return results


def _read(ctx: _Ctx, t: TypeInfo, slot: int, offset: int, name: str, depth: int = 0) -> Need:
    """Generator: the decoded value of type ``t`` stored at (``slot``, ``offset``)."""
    layout = ctx.layout
    if depth > MAX_DEPTH:
        raise UsageError(f"{ctx.path}: {name} nests deeper than {MAX_DEPTH} levels; read a "
                         "part of it by path instead")
    match t:
        case ValueType():
            yield from ctx.need({slot}, name)
            raw = extract(ctx.word(slot), offset, t.size)
            return decode_value(t, raw, layout.underlying(t))
        case StructType():
            members = [m for m in t.members
                       if not isinstance(layout.type(m.type_id), MappingType)]
            gens = [_read(ctx, layout.type(m.type_id), offset_slot(slot, m.slot), m.offset,
                          f"{name}.{m.label}", depth + 1) for m in members]
            values = yield from _gather(gens)
            return {m.label: v for m, v in zip(members, values, strict=True)}
        case StaticArrayType():
            ctx.budget(t.size // 32, name)
            return (yield from _elements(ctx, t.base, slot, t.length, name, depth))
        case DynamicArrayType():
            yield from ctx.need({slot}, f"{name}.length")
            length = ctx.word(slot)
            if ctx.max_elements is not None and length > ctx.max_elements:
                ctx.truncated[name] = length
                length = ctx.max_elements
            base = layout.type(t.base)
            ctx.budget(array_slots(base, length) if length < WORD // 64 else WORD, f"{name}")
            data = data_slot(slot)
            return (yield from _elements(ctx, t.base, data, length, name, depth))
        case BytesType():
            return (yield from _read_bytes(ctx, t, slot, name))
        case MappingType():
            raise UsageError(f"{ctx.path}: {name} is a {t.label}; read it with a key ([key])")


def _elements(ctx: _Ctx, base_id: str, data: int, length: int, name: str, depth: int) -> Need:
    base = ctx.layout.type(base_id)
    gens = []
    for i in range(length):
        s, o = element_location(base, data, i)
        gens.append(_read(ctx, base, s, o, f"{name}[{i}]", depth + 1))
    return (yield from _gather(gens))


def _read_bytes(ctx: _Ctx, t: BytesType, slot: int, name: str) -> Need:
    yield from ctx.need({slot}, name)
    word = ctx.word(slot)
    long, length = bytes_header(word, f"{ctx.path} ({name} at slot {hex32(slot)})")
    if not long:
        return as_text(t, short_bytes(word, length))
    n = (length + 31) // 32
    ctx.budget(n, f"{name} ({length} bytes)")
    data = data_slot(slot)
    slots = [offset_slot(data, i) for i in range(n)]
    yield from ctx.need(slots, f"{name} data")
    return as_text(t, long_bytes([ctx.word(s) for s in slots], length))


def _read_length(ctx: _Ctx, loc: Location) -> Need:
    yield from ctx.need({loc.slot}, loc.path)
    word = ctx.word(loc.slot)
    if isinstance(loc.length_of, DynamicArrayType):
        return word
    return bytes_header(word, f"{loc.path} (slot {hex32(loc.slot)})")[1]


def _read_path(ctx: _Ctx, loc: Location) -> Need:
    """The first round asks the path's own slots and every length its indices depend on;
    the indices are checked before anything that depends on the values is asked."""
    if loc.length_of is not None:
        gen = _read_length(ctx, loc)
    else:
        gen = _read(ctx, loc.type, loc.slot, loc.offset, loc.path)
    try:
        first, done, value = next(gen), False, None
    except StopIteration as stop:
        first, done, value = set(), True, stop.value
    for c in loc.checks:
        ctx.used.setdefault(c.length_slot, f"{c.array}.length")
    lengths = {c.length_slot for c in loc.checks if c.length_slot not in ctx.known}
    if first or lengths:
        yield first | lengths
    for c in loc.checks:
        length = ctx.word(c.length_slot)
        if c.index >= length:
            raise IndexOutOfBounds(loc.path, c.array, c.index, length, c.length_slot)
    if done:
        return value
    while True:
        try:
            need = gen.send(None)
        except StopIteration as stop:
            return stop.value
        yield need


def located(layout: Layout, path: str) -> Location:
    """:func:`resolve`, kept per layout object (a Location depends on the layout and the path
    text only): a watch plans the same paths at every block."""
    cache = layout.__dict__.get("_located")
    if cache is None:
        cache = layout.__dict__["_located"] = {}
    location = cache.get(path)
    if location is None:
        location = resolve(layout, path)  # a UsageError is raised again, never kept
        if len(cache) < 1 << 16:
            cache[path] = location
    return location


class ReadPlan:
    """Plan the reads of several paths together; see the module docstring for the protocol::

        plan = ReadPlan(layout, ["a.b[3]", 'names["x"]', "arr"])
        while slots := plan.next_round():
            plan.feed({s: proven_word(s) for s in slots})
        results = plan.results()
    """

    def __init__(self, layout: Layout, paths: Iterable[str], *,
                 max_slots_per_path: int = DEFAULT_MAX_SLOTS, max_elements: int | None = None):
        self.layout = layout
        self.paths = list(paths)
        self.locations = [located(layout, p) for p in self.paths]
        for loc in self.locations:
            if loc.length_of is None and isinstance(loc.type, MappingType):
                raise UsageError(f"{loc.path}: is a mapping ({loc.type.label}); a mapping has "
                                 "no value of its own, name a key: path[key]")
        self.known: dict[int, int] = {}
        self._ctxs = [_Ctx(layout, self.known, loc.path, max_slots_per_path, max_elements)
                      for loc in self.locations]
        self._gens = [_read_path(c, loc) for c, loc in zip(self._ctxs, self.locations,
                                                             strict=True)]
        self._values: list[Any] = [None] * len(self._gens)
        self._pending: dict[int, set[int]] | None = None  # None: not started
        self._asked: set[int] = set()
        self.rounds = 0

    def _advance(self, i: int, first: bool) -> None:
        assert self._pending is not None
        try:
            need = next(self._gens[i]) if first else self._gens[i].send(None)
        except StopIteration as done:
            self._values[i] = done.value
            self._pending.pop(i, None)
            return
        self._pending[i] = need

    def next_round(self) -> set[int]:
        """The slots still needed (all paths together); an empty set when the plan is done."""
        if self._pending is None:
            self._pending = {}
            for i in range(len(self._gens)):
                self._advance(i, True)
        elif self._asked:
            missing = self._asked - self.known.keys()
            if missing:
                return set(missing)  # not fed yet: the same question again
            for i in list(self._pending):
                self._advance(i, False)
        self._asked = set().union(*self._pending.values()) - self.known.keys() \
            if self._pending else set()
        if self._asked:
            self.rounds += 1
        return set(self._asked)

    def feed(self, values: Mapping[int, int]) -> None:
        """Hand over proven slot values (each an int word in [0, 2**256))."""
        for slot, value in values.items():
            if not isinstance(slot, int) or not 0 <= slot < WORD:
                raise ValueError(f"slot {slot!r} is not a 256-bit integer")
            if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < WORD:
                raise ValueError(f"value {value!r} of slot {hex32(slot)} is not a 256-bit word")
            if slot in self.known and self.known[slot] != value:
                raise ValueError(f"slot {hex32(slot)} fed twice with different values")
            self.known[slot] = value

    @property
    def done(self) -> bool:
        return self._pending is not None and not self._pending and not (
            self._asked - self.known.keys()
        )

    def results(self) -> list[ReadResult]:
        """One :class:`ReadResult` per path, in the order asked."""
        if not self.done:
            raise RuntimeError("the plan still needs slots: call next_round()/feed() until "
                               "next_round() returns an empty set")
        out = []
        for loc, ctx, value in zip(self.locations, self._ctxs, self._values, strict=True):
            out.append(ReadResult(loc.path, loc.type_label, value, list(ctx.used), loc,
                                  dict(ctx.used), self.layout, dict(ctx.truncated)))
        return out


def read_all(layout: Layout, paths: Iterable[str],
             source: Callable[[set[int]], Mapping[int, int]]) -> list[ReadResult]:
    """Drive a plan with ``source(slots) -> {slot: word}`` (one call per round)."""
    plan = ReadPlan(layout, paths)
    while slots := plan.next_round():
        plan.feed(source(slots))
    return plan.results()
