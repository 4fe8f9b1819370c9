"""When to try again: Retry-After (seconds or an HTTP date) and capped exponential backoff with full jitter."""

from __future__ import annotations

import random
import re
import time
from email.utils import parsedate_to_datetime
from typing import Callable, Optional

RETRIED_STATUSES = frozenset({429, 503})
_SECONDS = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*$")


def parse_retry_after(value: Optional[str], *, now: Optional[float] = None) -> Optional[float]:
    """Seconds to wait from a Retry-After value (delta-seconds or an HTTP date); None when absent or unreadable."""
    if value is None:
        return None
    seconds = _SECONDS.match(value)
    if seconds:
        return float(seconds.group(1))
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None or when.tzinfo is None:
        # RFC 9110 dates are GMT; one without a zone is not an HTTP date.
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def backoff_delay(
    attempt: int, *, base_delay: float, max_delay: float, rand: Callable[[], float] = random.random
) -> float:
    """The wait after failed attempt `attempt` (from 1): uniform in [0, min(max_delay, base_delay * 2^(attempt-1))]."""
    return rand() * min(max_delay, base_delay * (2 ** (attempt - 1)))


def retry_delay(
    attempt: int,
    retry_after: Optional[float],
    *,
    base_delay: float,
    max_delay: float,
    rand: Callable[[], float] = random.random,
) -> float:
    """
    The wait before the next attempt: never less than the server's Retry-After, the jittered backoff otherwise (so
    that many clients refused at once do not all come back at the same instant).
    """
    jittered = backoff_delay(attempt, base_delay=base_delay, max_delay=max_delay, rand=rand)
    return jittered if retry_after is None else max(retry_after, jittered)
