"""`vision.components`: the same components as OpenCV's own call, with 16- or 32-bit labels."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.components import components


@pytest.mark.parametrize(("shape", "fill"), [
    ((72, 72), 0.3), ((300, 400), 0.02), ((400, 400), 0.6),
])
@pytest.mark.parametrize("connectivity", [4, 8])
def test_components_match_opencv(shape: tuple[int, int], fill: float, connectivity: int) -> None:
    rng = np.random.default_rng(7)
    mask = (rng.random(shape) < fill).astype(np.uint8) * 255
    count, labels, stats, cents = components(mask, connectivity)
    ref = cv2.connectedComponentsWithStats(mask, connectivity=connectivity)
    assert count == ref[0]
    assert np.array_equal(labels, ref[1])
    assert np.array_equal(stats, ref[2]) and np.array_equal(cents, ref[3])
    # 16-bit labels only where every label fits; a mask of 96,000 set pixels gets 32-bit ones.
    assert labels.dtype == (np.uint16 if np.count_nonzero(mask) < 65535 else np.int32)
