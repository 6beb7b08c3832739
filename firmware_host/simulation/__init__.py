"""The simulated tower, and what plays on it: nothing that runs at the bar imports this package.

- `scene`, `tray`, `camera`: a `SimulatedTray` of dice drawn by the lab's renderer
  (`vision.lab.render`) and a `SimulatedCamera` filming it, read by the real vision pipeline;
- `table`: a `VirtualTable` of players and a game master throwing on that tray;
- `demo`: `dicetower demo`, a whole tower on one machine (the real controller, hub, journal and
  scoreboard around the simulated tray and mock pins);
- `bench_tower`, `bench_calibrate`: `dicetower bench tower` and `bench calibrate`, which play
  on it (and score with the lab's rules).

The command line reaches it: `demo` and `bench` import it when they run, and
`firmware_host.commands.camera_sources` offers its camera to `firmware_host.camera` so that a
configuration's ``source = "simulated"`` still builds one. pyproject.toml's import contracts
keep the camera, controller, scoreboard, hub, rules, hardware, vision and calibration from
importing it or the lab.
"""
