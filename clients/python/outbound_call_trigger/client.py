"""The API client: trigger_call with one Idempotency-Key per logical call, kept across its retries."""

from __future__ import annotations

import json
import time
import uuid
from datetime import datetime
from typing import Any, Callable, Dict, Mapping, Optional, Union

import httpx

from .errors import ApiError, error_code
from .retry import RETRIED_STATUSES, parse_retry_after, retry_delay
from .types import MetadataValue, TriggeredCall

__version__ = "0.1.0"
TRIGGER_PATH = "/api/v1/calls/trigger"


def _api_error(response: httpx.Response, retry_after: Optional[float]) -> ApiError:
    """The refusal as an ApiError: the envelope's message and its code, or the raw answer when it is not one."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and body.get("success") is False and isinstance(body.get("error"), str):
        message: str = body["error"]
        code = error_code(response.status_code, message)
        return ApiError(response.status_code, code, message, retry_after=retry_after)
    text = response.text.strip()[:200] or response.reason_phrase
    return ApiError(response.status_code, None, text, retry_after=retry_after)


def _scheduled(value: Union[datetime, str]) -> str:
    if isinstance(value, str):
        return value
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError("scheduled_at must carry its UTC offset (an aware datetime)")
    return value.isoformat()


class Client:
    """
    Calls the trigger of an outbound-call-trigger server.

    429 and 503 answers and network errors are retried, up to `max_attempts` attempts in all: after the server's
    Retry-After when it gives one, else after a jittered exponential backoff (base_delay, doubling, capped at
    max_delay). A Retry-After longer than `max_retry_after` is not waited for: the ApiError is raised at once, with
    its retry_after, for the caller to schedule. Other refusals are raised as ApiError without retrying.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        max_attempts: int = 4,
        base_delay: float = 0.5,
        max_delay: float = 8,
        max_retry_after: float = 60,
        timeout: float = 15,
        transport: Optional[httpx.BaseTransport] = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.max_attempts = max_attempts
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.max_retry_after = max_retry_after
        self._sleep = sleep
        self._http = httpx.Client(
            base_url=base_url,
            transport=transport,
            timeout=timeout,
            headers={
                "authorization": f"Bearer {api_key}",
                "user-agent": f"outbound-call-trigger-python/{__version__} httpx/{httpx.__version__}",
            },
        )

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def trigger_call(
        self,
        phone_number: str,
        *,
        agent_id: Optional[str] = None,
        name: Optional[str] = None,
        email: Optional[str] = None,
        metadata: Optional[Mapping[str, MetadataValue]] = None,
        scheduled_at: Optional[Union[datetime, str]] = None,
        recipient_timezone: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> TriggeredCall:
        """
        Places a call to `phone_number` (E.164, e.g. "+14155552671"). One logical call, one Idempotency-Key: pass
        your own (a CRM record's id and the reason for the call) so that a repeat of your own job is not a second
        call; without one a new uuid4 is used, kept across this method's retries.
        """
        body: Dict[str, Any] = {"phone_number": phone_number}
        optional = {
            "agent_id": agent_id,
            "name": name,
            "email": email,
            "metadata": dict(metadata) if metadata is not None else None,
            "scheduled_at": _scheduled(scheduled_at) if scheduled_at is not None else None,
            "recipient_timezone": recipient_timezone,
        }
        body.update({field: value for field, value in optional.items() if value is not None})
        key = idempotency_key if idempotency_key is not None else str(uuid.uuid4())
        # The same bytes on every attempt: the server replays a key's answer only for the same body.
        content = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        headers = {"content-type": "application/json", "idempotency-key": key}

        attempt = 0
        while True:
            attempt += 1
            try:
                response = self._http.post(TRIGGER_PATH, content=content, headers=headers)
            except httpx.TransportError:
                if attempt >= self.max_attempts:
                    raise
                self._sleep(retry_delay(attempt, None, base_delay=self.base_delay, max_delay=self.max_delay))
                continue
            if response.status_code == 200:
                answer = response.json()
                return TriggeredCall(
                    call_id=answer["call_id"],
                    status=answer["status"],
                    idempotency_key=key,
                    replayed=response.headers.get("idempotent-replayed") == "true",
                )
            retry_after = parse_retry_after(response.headers.get("retry-after"))
            retried = response.status_code in RETRIED_STATUSES
            if not retried or attempt >= self.max_attempts or (retry_after or 0) > self.max_retry_after:
                raise _api_error(response, retry_after)
            self._sleep(retry_delay(attempt, retry_after, base_delay=self.base_delay, max_delay=self.max_delay))
