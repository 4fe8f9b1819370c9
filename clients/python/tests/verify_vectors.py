"""Verifies the deliveries on stdin (JSON: [{body, headers, secret}]) and prints one {ok, error} per delivery.

Not a pytest file: the root test test/clients/python-client.test.ts signs the deliveries with the JavaScript
`standardwebhooks` library and compares these verdicts with that library's own.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from outbound_call_trigger import WebhookVerificationError, verify_webhook  # noqa: E402


def main() -> None:
    verdicts = []
    for vector in json.load(sys.stdin):
        try:
            verify_webhook(vector["body"].encode(), vector["headers"], vector["secret"])
            verdicts.append({"ok": True, "error": None})
        except WebhookVerificationError as error:
            verdicts.append({"ok": False, "error": str(error)})
    json.dump(verdicts, sys.stdout)


if __name__ == "__main__":
    main()
