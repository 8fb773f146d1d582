"""Values only the verifier builds and nobody changes after (docs/design.md §Trust flow).

A proven account or an anchored block is the verifier's statement about a pinned header; code
downstream may read it, never edit it (``account.balance = 10**18`` must fail, not quietly turn
a proof into a claim). :class:`Sealed` refuses attribute assignment and deletion once built;
its subclasses set their fields through :meth:`_seal` in their constructor.
"""

from __future__ import annotations

from typing import Any


class Sealed:
    __slots__ = ()

    def _seal(self, **fields: Any) -> None:
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only: it states what was proven")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only: it states what was proven")
