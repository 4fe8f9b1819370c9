"""verify_webhook on deliveries the real server sent: accepted as sent; tampered, stale or future ones refused."""

from __future__ import annotations

import base64
from typing import Any, Dict

import pytest

from outbound_call_trigger import WebhookVerificationError, verify_webhook
from outbound_call_trigger.webhooks import sign


def _each(deliveries: Dict[str, Any]):
    assert deliveries["deliveries"], "the root test hands at least one delivery"
    for delivery in deliveries["deliveries"]:
        yield delivery["body"].encode(), dict(delivery["headers"]), int(delivery["headers"]["webhook-timestamp"])


def test_accepts_what_the_server_sent(deliveries: Dict[str, Any]) -> None:
    types = []
    for body, headers, stamp in _each(deliveries):
        event = verify_webhook(body, headers, deliveries["secret"], now=stamp + 5)
        types.append(event["type"])
        assert event["data"]["call_id"] == deliveries["call_id"]
        assert event["data"]["metadata"] == {"crm_id": "L-9"}
    assert "call.completed" in types


def test_header_names_in_any_case_and_a_str_body(deliveries: Dict[str, Any]) -> None:
    for body, headers, stamp in _each(deliveries):
        upper = {name.title(): value for name, value in headers.items()}
        assert verify_webhook(body.decode(), upper, deliveries["secret"], now=stamp)["type"].startswith("call.")


def test_refuses_a_tampered_body_or_a_wrong_secret(deliveries: Dict[str, Any]) -> None:
    other_secret = "whsec_" + base64.b64encode(b"k" * 32).decode()
    for body, headers, stamp in _each(deliveries):
        tampered = body.replace(b'"L-9"', b'"L-8"')
        assert tampered != body
        with pytest.raises(WebhookVerificationError, match="no matching signature"):
            verify_webhook(tampered, headers, deliveries["secret"], now=stamp)
        with pytest.raises(WebhookVerificationError, match="no matching signature"):
            verify_webhook(body, headers, other_secret, now=stamp)
        renamed = {**headers, "webhook-id": headers["webhook-id"] + "x"}
        with pytest.raises(WebhookVerificationError, match="no matching signature"):
            verify_webhook(body, renamed, deliveries["secret"], now=stamp)


def test_refuses_stale_and_future_timestamps_beyond_the_tolerance(deliveries: Dict[str, Any]) -> None:
    secret = deliveries["secret"]
    for body, headers, stamp in _each(deliveries):
        assert verify_webhook(body, headers, secret, now=stamp + 300)
        assert verify_webhook(body, headers, secret, now=stamp - 300)
        with pytest.raises(WebhookVerificationError, match="too old"):
            verify_webhook(body, headers, secret, now=stamp + 301)
        with pytest.raises(WebhookVerificationError, match="future"):
            verify_webhook(body, headers, secret, now=stamp - 301)
        with pytest.raises(WebhookVerificationError, match="too old"):
            verify_webhook(body, headers, secret, now=stamp + 61, tolerance=60)


def test_refuses_missing_headers_and_accepts_any_matching_signature(deliveries: Dict[str, Any]) -> None:
    secret = deliveries["secret"]
    for body, headers, stamp in _each(deliveries):
        for name in ("webhook-id", "webhook-timestamp", "webhook-signature"):
            partial = {k: v for k, v in headers.items() if k != name}
            with pytest.raises(WebhookVerificationError, match=f"missing {name}"):
                verify_webhook(body, partial, secret, now=stamp)
        rotated = sign("whsec_" + base64.b64encode(b"o" * 32).decode(), headers["webhook-id"], stamp, body)
        several = {**headers, "webhook-signature": f"v2,abc {rotated} {headers['webhook-signature']}"}
        assert verify_webhook(body, several, secret, now=stamp)
        only_others = {**headers, "webhook-signature": f"{rotated} v1,{'A' * 44}"}
        with pytest.raises(WebhookVerificationError):
            verify_webhook(body, only_others, secret, now=stamp)
        with pytest.raises(WebhookVerificationError, match="not a number"):
            verify_webhook(body, {**headers, "webhook-timestamp": "12e3"}, secret, now=stamp)
