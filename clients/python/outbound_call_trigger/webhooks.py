"""Standard Webhooks verification with the standard library: HMAC-SHA256 of "{id}.{timestamp}.{body}", base64."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import time
from typing import Mapping, Optional, Union, cast

from .errors import WebhookVerificationError
from .types import WebhookEvent

SECRET_PREFIX = "whsec_"
DEFAULT_TOLERANCE_SECONDS = 300
_TIMESTAMP = re.compile(r"^[0-9]{1,15}$")


def _header(headers: Mapping[str, str], name: str) -> str:
    """A header by name whatever its case (a plain dict from a framework may keep the sender's)."""
    value = headers.get(name)
    if value is None:
        value = next((v for k, v in headers.items() if k.lower() == name), None)
    if value is None or value == "":
        raise WebhookVerificationError(f"missing {name} header")
    return value


def signing_key(secret: str) -> bytes:
    """The HMAC key of a `whsec_` secret: the base64 after the prefix, decoded (not the secret's text)."""
    encoded = secret[len(SECRET_PREFIX) :] if secret.startswith(SECRET_PREFIX) else secret
    try:
        key = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError) as error:
        raise ValueError("webhook secret is not whsec_ followed by standard base64") from error
    if not key:
        raise ValueError("webhook secret is empty")
    return key


def sign(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """The `v1,<base64>` signature of a delivery (what the server sends in webhook-signature)."""
    content = msg_id.encode() + b"." + str(timestamp).encode() + b"." + body
    digest = hmac.new(signing_key(secret), content, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def verify_webhook(
    body: Union[bytes, str],
    headers: Mapping[str, str],
    secret: str,
    *,
    tolerance: int = DEFAULT_TOLERANCE_SECONDS,
    now: Optional[float] = None,
) -> WebhookEvent:
    """
    The event of an authentic delivery, or WebhookVerificationError.

    `body` must be the raw bytes received (parse nothing before: re-serialized JSON does not verify). A delivery is
    authentic when one of the space-separated `v1,` signatures of webhook-signature is the HMAC-SHA256 of
    "{webhook-id}.{webhook-timestamp}.{body}" keyed with the secret, and webhook-timestamp lies within `tolerance`
    seconds of `now` (default: the current time) either side. Deliveries are at least once: drop a webhook-id seen
    before.
    """
    raw = body.encode() if isinstance(body, str) else bytes(body)
    msg_id = _header(headers, "webhook-id")
    stamp = _header(headers, "webhook-timestamp")
    signatures = _header(headers, "webhook-signature")
    if not _TIMESTAMP.match(stamp):
        raise WebhookVerificationError("webhook-timestamp is not a number of seconds")
    timestamp = int(stamp)
    # Whole seconds, as the JavaScript library counts them, so both decide alike at the edges.
    current = int(time.time() if now is None else now)
    if current - timestamp > tolerance:
        raise WebhookVerificationError("webhook-timestamp is too old")
    if timestamp - current > tolerance:
        raise WebhookVerificationError("webhook-timestamp is too far in the future")
    expected = sign(secret, msg_id, timestamp, raw).encode()
    matched = False
    for candidate in signatures.split(" "):
        version = candidate.partition(",")[0]
        # Every candidate is compared (no early exit), so the time taken does not tell which one matched.
        if version == "v1" and hmac.compare_digest(candidate.encode(), expected):
            matched = True
    if not matched:
        raise WebhookVerificationError("no matching signature")
    try:
        event = json.loads(raw)
    except ValueError as error:
        raise WebhookVerificationError("body is not JSON") from error
    if not isinstance(event, dict):
        raise WebhookVerificationError("body is not a JSON object")
    return cast(WebhookEvent, event)
