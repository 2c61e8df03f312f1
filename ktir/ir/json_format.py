"""
The envelope of ktir's JSON files: an object whose `"format"` names what it holds and whose
`"version"` says which form of it (`Report.to_json`, `ServingResult.to_json`). Readers check
both before reading a field, so a file of another kind or version is one clear message.
"""

from __future__ import annotations

import json
from typing import Any


def read_envelope(
    text: str, format_name: str, version: int, what: str, error: type[ValueError]
) -> dict[str, Any]:
    """
    The object `text` holds, checked to carry `"format": format_name` and `"version": version`;
    else `error` saying what is wrong. `what` names the kind for messages: "ktir report" gives
    'not a ktir report (no "format": "ktir-report")' and "report version 2, expected 1".
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as problem:
        raise error(f"not JSON: {problem}") from None
    if not isinstance(data, dict) or data.get("format") != format_name:
        raise error(f'not a {what} (no "format": "{format_name}")')
    if data.get("version") != version:
        label = what.removeprefix("ktir ")
        raise error(f"{label} version {data.get('version')!r}, expected {version}")
    return data
