"""Retry-After in both of its forms, and the capped, jittered backoff (pure functions: no server)."""

from __future__ import annotations

from email.utils import formatdate

from outbound_call_trigger.errors import ERRORS, error_code
from outbound_call_trigger.retry import backoff_delay, parse_retry_after, retry_delay

NOW = 2_500_000_000.0


def test_retry_after_in_seconds_or_as_an_http_date() -> None:
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after(" 2.5 ") == 2.5
    assert parse_retry_after(formatdate(NOW + 30, usegmt=True), now=NOW) == 30.0
    assert parse_retry_after(formatdate(NOW - 30, usegmt=True), now=NOW) == 0.0
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    assert parse_retry_after("-3") is None


def test_backoff_doubles_up_to_the_cap_and_is_jittered() -> None:
    top = lambda: 1.0  # noqa: E731 - the largest draw
    assert [backoff_delay(n, base_delay=0.5, max_delay=8, rand=top) for n in range(1, 8)] == [0.5, 1, 2, 4, 8, 8, 8]
    assert backoff_delay(3, base_delay=0.5, max_delay=8, rand=lambda: 0.25) == 0.5


def test_never_sooner_than_retry_after() -> None:
    assert retry_delay(1, 12.0, base_delay=0.5, max_delay=8, rand=lambda: 1.0) == 12.0
    assert retry_delay(5, 1.0, base_delay=0.5, max_delay=8, rand=lambda: 1.0) == 8.0
    assert retry_delay(2, None, base_delay=0.5, max_delay=8, rand=lambda: 0.5) == 0.5


def test_error_codes_from_status_and_message() -> None:
    assert error_code(429, "Rate limit exceeded. Retry after 17 seconds.") == "RATE_LIMITED"
    assert error_code(400, "Invalid phone number format") == "INVALID_PHONE_NUMBER"
    assert error_code(400, "email must be a valid email address") == "VALIDATION"
    assert error_code(404, "Route GET /x not found") == "NOT_FOUND"
    assert error_code(502, "Bad Gateway") is None
    for code, (status, template) in ERRORS.items():
        if "{" not in template:
            assert error_code(status, template) == code
