"""The calibrate tool (`dicetower calibrate`) and the vision profiles it writes.

Four steps tune the tower to a bar's light and dice: the empty tray (`tray`: its picture,
outline and zones), the light (`light`, over the knobs of `controls`: ring light, exposure,
gain), the dice (`dice`: die size, pip polarity and colours, chosen by how well readings
agree with the number of dice thrown, `agreement`) and a check against no profile at all
(`check`). `session` runs them on photos or a live camera (`sources`), `report` talks to
the installer, `store` writes the profile with a backup, `benchmark` measures the gain
(`dicetower bench calibrate`). docs/calibration.md tells the whole story.
"""
