"""The controller: the camera, vision and hardware loop of the tower, around the game's hub.

Frames come from a camera source (`firmware_host.camera`); `settle` decides when the dice are
still and several readings agree; `referee` turns a reading into a game input (zones, kept
dice, counts, the 4D square) or a reasoned request to throw again; the input goes to the hub
(`firmware_host.hub`), which applies it through the rules engine and journals it before it is
carried out; the controller, one of the hub's subscribers, carries out its effects on the
tower (`tower_lights`, `dispenser`). `calibration_job` calibrates the running tower from the
game master's page; `assembly` builds the tower from `config` (`tower.toml`); the demo's
simulated one is `firmware_host.simulation`'s, which nothing here imports. The vision pipeline
and the rules engine stay pure: only this package joins them to the hardware.
"""
