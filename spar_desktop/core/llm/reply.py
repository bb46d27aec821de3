"""Reading a language model's JSON reply, shared by chat's helpers and tagging (which must not
import chat): models wrap JSON in ```json fences or chatter around it."""

from __future__ import annotations

import json
import re
from typing import Any


def json_in_reply(text: str) -> Any:
    """The JSON in a model's reply; json.JSONDecodeError (a ValueError) when there is none."""
    text = (text or "").strip()
    fenced = re.search(r"```(?:json)?\s*(.+?)```", text, re.S)
    if fenced:
        text = fenced.group(1).strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        m = re.search(r"(\{.*\}|\[.*\])", text, re.S)
        if not m:
            raise
        return json.loads(m.group(1))
