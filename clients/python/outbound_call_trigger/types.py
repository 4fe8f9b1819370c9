"""The API's shapes as typed dictionaries, mirroring openapi/openapi.json (a root test keeps them equal)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Literal, Optional, TypedDict, Union

MetadataValue = Union[str, int, float, bool, None]
"""A metadata value: a string (at most 500 characters), number, boolean or null."""

CallStatus = Literal["initiated", "dialing", "in_progress", "completed", "failed"]
FailureReason = Literal[
    "busy", "no_answer", "rejected", "provider_error", "expired", "canceled", "voicemail", "do_not_call"
]
AttemptOutcomeName = Literal["completed", "busy", "no_answer", "rejected", "provider_error", "voicemail"]
AnsweredBy = Literal["human", "machine", "unknown"]
TimezoneSource = Literal["request", "country", "agent"]
EventType = Literal["call.started", "call.completed", "call.failed"]


ConsentType = Literal["express_written", "express", "established_business_relationship", "inquiry"]
Verdict = Literal["allowed", "held", "refused"]


class _ConsentRequired(TypedDict):
    type: ConsentType
    obtained_at: str
    """RFC 3339 with an offset; not in the future."""
    source: str
    """Where it was obtained (at most 200 characters)."""


class Consent(_ConsentRequired, total=False):
    """The trigger's consent record: stored with the call and in every event."""

    evidence_url: str
    """An https:// link to the evidence."""


class _TriggerRequired(TypedDict):
    phone_number: str
    """E.164: "+", country code, digits; no spaces, dashes or parentheses (the server does not normalize it)."""


class TriggerRequest(_TriggerRequired, total=False):
    """The body of POST /api/v1/calls/trigger."""

    agent_id: str
    name: str
    email: str
    metadata: Dict[str, MetadataValue]
    scheduled_at: str
    recipient_timezone: str
    recipient_region: str
    """ISO 3166-2 such as US-FL: where the callee is, for the calling rules."""
    consent: Consent


class TriggerResponse(TypedDict):
    """The 200 answer of the trigger."""

    success: Literal[True]
    call_id: str
    status: Literal["initiated"]


@dataclass(frozen=True)
class TriggeredCall:
    """What Client.trigger_call returns: the answer, the Idempotency-Key it was sent with, whether it was replayed."""

    call_id: str
    status: Literal["initiated"]
    idempotency_key: str
    replayed: bool
    """True when the server answered with the stored response of an earlier request with the same key."""


class AttemptOutcome(TypedDict):
    attempt: int
    outcome: AttemptOutcomeName
    at: str


class TranscriptEntry(TypedDict):
    speaker: Literal["agent", "callee"]
    text: str
    at: str


class CallResult(TypedDict):
    """What the voice-agent runtime reported about the call."""

    outcome: Optional[str]
    summary: Optional[str]
    data: Optional[Dict[str, MetadataValue]]
    transcript: Optional[List[TranscriptEntry]]
    transcript_url: Optional[str]
    recording_url: Optional[str]
    opt_out: bool
    received_at: str


class ComplianceCandidate(TypedDict):
    region: str
    timezone: str
    local_time: str
    allowed: bool
    rule: Optional[str]


class ComplianceCap(TypedDict):
    count: int
    limit: int
    window: str
    scope: Literal["agency", "account"]


class ComplianceRecord(TypedDict):
    """What the calling rules checked before the current attempt, and the verdict."""

    attempt: int
    checked_at: str
    verdict: Verdict
    reasons: List[str]
    rules_version: str
    candidates: List[ComplianceCandidate]
    cap: Optional[ComplianceCap]
    do_not_call: Literal["clear", "listed"]
    consent: Literal["on_record", "not_required", "missing"]


class CallData(TypedDict):
    """A call as webhooks see it (the `data` of every event)."""

    call_id: str
    status: CallStatus
    agent_id: str
    phone_number: str
    name: Optional[str]
    email: Optional[str]
    metadata: Dict[str, MetadataValue]
    created_at: str
    started_at: Optional[str]
    answered_at: Optional[str]
    ended_at: Optional[str]
    duration_seconds: Optional[int]
    failure_reason: Optional[FailureReason]
    attempt: int
    attempts: int
    attempt_outcomes: List[AttemptOutcome]
    answered_by: Optional[AnsweredBy]
    voicemail_left: Optional[bool]
    scheduled_at: Optional[str]
    timezone: Optional[str]
    timezone_source: Optional[TimezoneSource]
    result: Optional[CallResult]
    recipient_region: Optional[str]
    consent: Optional[Consent]
    compliance: Optional[ComplianceRecord]


class WebhookEvent(TypedDict):
    """A delivery's body: call.started, call.completed or call.failed."""

    type: EventType
    timestamp: str
    data: CallData
