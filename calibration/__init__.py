"""The calibrate tool (`dicetower calibrate`) and the vision profiles it writes.

Four steps tune the tower to a bar's light and dice: the empty tray (`tray`: its picture,
outline and zones), the light (`light`, over the knobs of `controls`: ring light, exposure,
gain), the dice (`dice`: die size, pip polarity and colours, chosen by how well readings
agree with the number of dice thrown, `agreement`) and a check against no profile at all
(`check`). Given the dice's values (`labels`: a labels file, the installer at the terminal,
the simulated tray), the dice's faces are learnt too (`adapt`: the face network's last layer
refitted to these dice) and kept only where they read better (`faces`). `session` runs the
steps on photos or a live camera (`sources`), `report` talks to the installer, `store`
writes the profile with a backup. `dicetower bench calibrate`, which measures the gain,
plays on the simulated tower and lives with it (`firmware_host.simulation.bench_calibrate`).
docs/calibration.md tells the whole story.
"""
