"""The names of the values the evaluator passes on without looking inside them.

- :data:`Decoded`: a value a layout decoded from proven storage (an int, bool, bytes or str, a
  struct as a dict, an array as a list; a user decoder's object of any type), handed to a
  recipe's plan as a copy (recompute.evaluator.copies) and compared with ``==``.
- :data:`JSONValue`: a value written as JSON text (an evidence note, a parameter's text).
"""

from __future__ import annotations

from typing import Any, TypeAlias

Decoded: TypeAlias = Any  # a user decoder may return any object: nothing narrower is true
JSONValue: TypeAlias = "str | int | float | bool | None | list[JSONValue] | dict[str, JSONValue]"
