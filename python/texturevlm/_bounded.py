"""Caches kept to a bound, least recently used out first (an entry is moved to the end when
used: popped and put back)."""

from __future__ import annotations

from typing import Any, Dict


def drop_oldest(cache: Dict[Any, Any], most: int) -> None:
    """Drops `cache`'s oldest entries until it holds at most `most`. Threads may share the
    cache without a lock: between finding the oldest key and dropping it another thread can
    change the dict (`next(iter(cache))` then raises "dictionary changed size during
    iteration") or drop that key itself, and the drop is then tried again."""
    while len(cache) > most:
        try:
            cache.pop(next(iter(cache)), None)
        except (RuntimeError, StopIteration):  # changed, or emptied, by another thread meanwhile
            continue
