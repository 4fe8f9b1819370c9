"""Python client of outbound-call-trigger: trigger calls (retries, idempotency) and verify its webhooks."""

from .client import Client, __version__
from .errors import ERRORS, ApiError, OutboundCallTriggerError, WebhookVerificationError, error_code
from .types import (
    AttemptOutcome,
    CallData,
    CallResult,
    TranscriptEntry,
    TriggeredCall,
    TriggerRequest,
    TriggerResponse,
    WebhookEvent,
)
from .webhooks import verify_webhook

__all__ = [
    "ApiError",
    "AttemptOutcome",
    "CallData",
    "CallResult",
    "Client",
    "ERRORS",
    "OutboundCallTriggerError",
    "TranscriptEntry",
    "TriggerRequest",
    "TriggerResponse",
    "TriggeredCall",
    "WebhookEvent",
    "WebhookVerificationError",
    "__version__",
    "error_code",
    "verify_webhook",
]
