"""The calibrate tool and the calibration profiles it writes for the vision pipeline."""
