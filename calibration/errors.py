"""The one error the calibrate tool raises for input it cannot use: a sentence to act on."""

from __future__ import annotations


class CalibrationError(RuntimeError):
    """Calibration cannot go on; the message (one line) says what is wrong and what to do."""
