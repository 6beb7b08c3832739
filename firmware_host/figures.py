"""The figures every benchmark reports, computed one way.

The 95th percentile is the nearest rank (a delay some client really saw, never one between
two), NumPy's ``inverted_cdf`` method, on NumPy's 0-100 scale; the median is the standard
library's.
"""

from __future__ import annotations

from collections.abc import Sequence


def p95(values: Sequence[float]) -> float:
    """The 95th percentile of a non-empty sequence, by nearest rank."""
    import numpy as np  # loaded when a bench reports, not when the command line starts

    return float(np.percentile(values, 95, method="inverted_cdf"))
