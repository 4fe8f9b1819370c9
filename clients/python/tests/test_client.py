"""Client.trigger_call against the real server: success, idempotent repeats, typed refusals, retries keeping the key."""

from __future__ import annotations

import time
import uuid
from typing import Dict, List

import httpx
import pytest

from conftest import RecordingTransport
from outbound_call_trigger import ApiError, Client


def test_triggers_a_call(server: Dict[str, str]) -> None:
    with Client(server["base_url"], server["api_key"]) as client:
        call = client.trigger_call(
            "+14155552671", name="Ada Lovelace", email="ada@example.com", metadata={"crm_id": "L-1", "score": 3}
        )
    assert call.status == "initiated"
    assert uuid.UUID(call.call_id)
    assert uuid.UUID(call.idempotency_key).version == 4
    assert call.replayed is False


def test_a_repeat_with_the_same_key_is_the_same_call(server: Dict[str, str]) -> None:
    key = f"crm-L-2-{uuid.uuid4()}"
    with Client(server["base_url"], server["api_key"]) as client:
        first = client.trigger_call("+14155552671", metadata={"crm_id": "L-2"}, idempotency_key=key)
        again = client.trigger_call("+14155552671", metadata={"crm_id": "L-2"}, idempotency_key=key)
        other = client.trigger_call("+14155552671", metadata={"crm_id": "L-2"})
    assert again.call_id == first.call_id
    assert (first.replayed, again.replayed) == (False, True)
    assert other.call_id != first.call_id


def test_the_same_key_with_another_body_is_a_typed_422(server: Dict[str, str]) -> None:
    key = str(uuid.uuid4())
    with Client(server["base_url"], server["api_key"]) as client:
        client.trigger_call("+14155552671", idempotency_key=key)
        with pytest.raises(ApiError) as refused:
            client.trigger_call("+14155552672", idempotency_key=key)
    assert (refused.value.status, refused.value.code) == (422, "IDEMPOTENCY_KEY_REUSED")


@pytest.mark.parametrize("phone", ["4155552671", "+1 415 555 2671", "+15551234"])
def test_a_400_is_a_typed_error_with_the_message_and_is_not_retried(server: Dict[str, str], phone: str) -> None:
    transport = RecordingTransport()
    sleeps: List[float] = []
    with Client(server["base_url"], server["api_key"], transport=transport, sleep=sleeps.append) as client:
        with pytest.raises(ApiError) as refused:
            client.trigger_call(phone)
    error = refused.value
    assert (error.status, error.code, error.message) == (400, "INVALID_PHONE_NUMBER", "Invalid phone number format")
    assert str(error) == "400 INVALID_PHONE_NUMBER: Invalid phone number format"
    assert len(transport.requests) == 1
    assert sleeps == []


def test_a_validation_message_names_the_field(server: Dict[str, str]) -> None:
    with Client(server["base_url"], server["api_key"]) as client:
        with pytest.raises(ApiError) as refused:
            client.trigger_call("+14155552671", name="x" * 201)
    assert (refused.value.status, refused.value.code) == (400, "VALIDATION")
    assert refused.value.message == "name must be at most 200 characters"


def test_a_wrong_key_is_a_typed_401(server: Dict[str, str]) -> None:
    key = server["api_key"]
    typo = key[:-1] + ("b" if key[-1] == "a" else "a")  # always another last character
    with Client(server["base_url"], typo) as client:
        with pytest.raises(ApiError) as refused:
            client.trigger_call("+14155552671")
    error = refused.value
    assert (error.status, error.code, error.message) == (401, "INVALID_API_KEY", "Invalid API key")


def test_network_errors_are_retried_with_the_same_key(server: Dict[str, str]) -> None:
    transport = RecordingTransport(fail_first=2)
    sleeps: List[float] = []
    with Client(
        server["base_url"], server["api_key"], transport=transport, sleep=sleeps.append, base_delay=0.2, max_delay=1
    ) as client:
        call = client.trigger_call("+14155552671")
    keys = {request.headers["idempotency-key"] for request in transport.requests}
    assert len(transport.requests) == 3
    assert keys == {call.idempotency_key}
    assert len(sleeps) == 2 and 0 <= sleeps[0] <= 0.2 and 0 <= sleeps[1] <= 0.4


def test_network_errors_past_max_attempts_are_raised(server: Dict[str, str]) -> None:
    transport = RecordingTransport(fail_first=10)
    sleeps: List[float] = []
    with Client(server["base_url"], server["api_key"], transport=transport, sleep=sleeps.append, max_attempts=3) as c:
        with pytest.raises(httpx.ConnectError):
            c.trigger_call("+14155552671")
    assert len(transport.requests) == 3 and len(sleeps) == 2


def test_a_429_waits_retry_after_and_retries_with_the_same_key(limited: Dict[str, str]) -> None:
    """The key's one request of the minute spent (a 400 counts and stores nothing): the client meets a 429, waits
    the Retry-After that ends the minute, and its retry with the same key is accepted."""
    spent = httpx.post(
        limited["base_url"] + "/api/v1/calls/trigger",
        json={"phone_number": "555"},
        headers={"authorization": f"Bearer {limited['api_key']}"},
    )
    assert spent.status_code == 400
    transport = RecordingTransport()
    sleeps: List[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        time.sleep(seconds)

    with Client(limited["base_url"], limited["api_key"], transport=transport, sleep=sleep) as client:
        call = client.trigger_call("+14155552671", metadata={"case": "rate-limited"})
    assert len(transport.requests) == 2
    assert {request.headers["idempotency-key"] for request in transport.requests} == {call.idempotency_key}
    assert len(sleeps) == 1 and 1 <= sleeps[0] <= 60
    # The root test then finds exactly one call stored for the limited key.
