"""Errors the client raises: ApiError for a refusal, WebhookVerificationError for a delivery that is not authentic."""

from __future__ import annotations

import re
from typing import Dict, Optional, Tuple

# The server's error table (schemas/error-codes.ts): code -> (status, message template). Its envelope carries only the
# message, so the code is found by matching the message; a root test keeps this table equal to the server's.
ERRORS: Dict[str, Tuple[int, str]] = {
    "HTTPS_REQUIRED": (400, "HTTPS is required"),
    "KEY_IN_URL": (400, "API keys must be sent in the Authorization header"),
    "INVALID_API_KEY": (401, "Invalid API key"),
    "API_ACCESS_DISABLED": (403, "API access is disabled"),
    "PLAN_REQUIRED": (403, "API access requires the agency plan"),
    "AGENT_FORBIDDEN": (403, "API key does not have access to this agent"),
    "INVALID_CONTEXT_TOKEN": (401, "Invalid context token"),
    "RESULT_ALREADY_DELIVERED": (409, "Result already delivered"),
    "TWILIO_SIGNATURE_INVALID": (403, "Invalid Twilio signature"),
    "RATE_LIMITED": (429, "Rate limit exceeded. Retry after {seconds} seconds."),
    "TOO_MANY_WAITING": (429, "Too many calls waiting. Retry after {seconds} seconds."),
    "TOO_MANY_FAILED_AUTH": (429, "Too many failed authentication attempts. Retry after {seconds} seconds."),
    "UNSUPPORTED_MEDIA_TYPE": (415, "Content-Type must be application/json"),
    "BODY_TOO_LARGE": (413, "Request body must not exceed {limit} bytes"),
    "MALFORMED_JSON": (
        400,
        "Request body is not valid JSON, or contains a forbidden __proto__ or constructor.prototype key",
    ),
    "BODY_NOT_OBJECT": (400, "Request body must be a JSON object"),
    "VALIDATION": (400, "{detail}"),
    "INVALID_PHONE_NUMBER": (400, "Invalid phone number format"),
    "AGENT_NOT_FOUND": (400, "Agent not found"),
    "NO_DEFAULT_AGENT": (400, "No agent specified and no default agent configured"),
    "AGENT_HAS_NO_PHONE": (400, "Agent has no phone number assigned"),
    "CONSENT_REQUIRED": (400, "Consent is required for this agent"),
    "OUTSIDE_CALLING_WINDOW": (400, "Outside the agent's calling window"),
    "OUTSIDE_PERMITTED_HOURS": (400, "Outside the permitted calling hours for this number"),
    "DO_NOT_CALL": (400, "Phone number is on the do-not-call list"),
    "IDEMPOTENCY_KEY_INVALID": (400, "Idempotency-Key must be 1 to 255 printable ASCII characters"),
    "IDEMPOTENCY_KEY_REUSED": (422, "Idempotency-Key was already used with a different request body"),
    "IDEMPOTENCY_IN_FLIGHT": (409, "A request with this Idempotency-Key is still being processed"),
    "NOT_FOUND": (404, "Route {method} {path} not found"),
    "METHOD_NOT_ALLOWED": (405, "Method {method} not allowed on {path}"),
    "SERVICE_UNAVAILABLE": (503, "Service temporarily unavailable"),
    "INTERNAL": (500, "Internal server error"),
}

# VALIDATION's template matches any message: it is the 400 that no other template names.
_PATTERNS = [
    (code, status, re.compile("^" + re.sub(r"\\\{\w+\\\}", ".+", re.escape(template)) + "$", re.DOTALL))
    for code, (status, template) in ERRORS.items()
    if code != "VALIDATION"
]


def error_code(status: int, message: str) -> Optional[str]:
    """The code of the table whose status and message template match; None for an answer the table does not know."""
    for code, expected, pattern in _PATTERNS:
        if expected == status and pattern.match(message):
            return code
    return "VALIDATION" if status == 400 else None


class OutboundCallTriggerError(Exception):
    """Base of the errors this package raises."""


class ApiError(OutboundCallTriggerError):
    """The server refused the request (after any retries): its status, the error code and the envelope's message."""

    def __init__(self, status: int, code: Optional[str], message: str, *, retry_after: Optional[float] = None):
        super().__init__(f"{status} {code or 'UNKNOWN'}: {message}")
        self.status = status
        self.code = code
        """A key of ERRORS, or None when the answer is not the API's envelope (a proxy's page, an unknown message)."""
        self.message = message
        self.retry_after = retry_after
        """Seconds the server asked to wait (429, 503), when it said."""


class WebhookVerificationError(OutboundCallTriggerError):
    """A delivery whose headers, signature or timestamp do not check out: answer it 4xx and do not act on it."""
