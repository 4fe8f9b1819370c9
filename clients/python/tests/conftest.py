"""What the tests against a real server are given: its URLs and keys, and a delivery it really sent (environment)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Dict, List

import httpx
import pytest

# The package from this checkout, whether or not it is installed.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

RUN_HINT = "run through the root test: npx vitest run test/clients/python-client.test.ts"


def _env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: {RUN_HINT}")
    return value


@pytest.fixture
def server() -> Dict[str, str]:
    """A server with the default rate limit, and an agency's key with a default agent."""
    return {"base_url": _env("OCT_BASE_URL"), "api_key": _env("OCT_API_KEY")}


@pytest.fixture
def limited() -> Dict[str, str]:
    """A server at one request per minute per key (a key no other test uses)."""
    return {"base_url": _env("OCT_LIMITED_BASE_URL"), "api_key": _env("OCT_LIMITED_API_KEY")}


@pytest.fixture
def deliveries() -> Dict[str, Any]:
    """{"secret": "whsec_...", "deliveries": [{"headers": {...}, "body": "..."}]}: what the server sent a receiver."""
    return json.loads(Path(_env("OCT_WEBHOOK_FILE")).read_text(encoding="utf-8"))


class RecordingTransport(httpx.BaseTransport):
    """The real HTTP transport, keeping each request's headers; `fail_first` raises ConnectError before sending."""

    def __init__(self, fail_first: int = 0):
        self.inner = httpx.HTTPTransport()
        self.fail_first = fail_first
        self.requests: List[httpx.Request] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if len(self.requests) <= self.fail_first:
            raise httpx.ConnectError("refused by the test before sending", request=request)
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()
