"""Follow mode writing to the evidence store (docs/watch.md §The evidence store): every final
line, and the block as the last final one, so a restarted bot continues right after it."""

from __future__ import annotations

from recompute.watch.evaluate import Line
from recompute.watch.sink import Sink
from recompute.watch.store import Store


class RecordingSink(Sink):
    """A :class:`~recompute.watch.sink.Sink` that also commits each block's final lines."""

    def __init__(self, *args, store: Store, **kwargs):
        super().__init__(*args, **kwargs)
        self.store = store

    def evaluated(self, lines: list[Line]) -> None:
        super().evaluated(lines)
        self._record([line for line in lines if line.final])

    def finalized(self, lines: list[Line]) -> None:
        super().finalized(lines)
        self._record(lines)

    def _record(self, lines: list[Line]) -> None:
        by_block: dict[int, list[Line]] = {}
        for line in lines:
            if line.hash is not None:
                by_block.setdefault(line.block, []).append(line)
        for block, group in sorted(by_block.items()):
            self.store.record_final([line.to_json() for line in group], block, group[0].hash)
