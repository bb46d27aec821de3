"""Token counts as the chunker sees them, for tests that check chunk sizes against a budget."""

from __future__ import annotations

from typing import Optional

from spar_desktop.core.documents.segment import Units
from spar_desktop.core.documents.tokens import UnitCost


def chunker_tokens(text: str, unit_cost: Optional[UnitCost] = None) -> int:
    """Encoder tokens in ``text`` (without [CLS]/[SEP]) by the chunker's own cost sums, rounded up."""
    hundredths = Units(text, unit_cost).cost(0, len(text))
    return -(-hundredths // Units.SCALE)
