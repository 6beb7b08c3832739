"""The controller: where camera, vision, rules engine, hardware, scoreboard and journal meet.

Frames come from a camera source (`firmware_host.camera`); `settle` decides when the dice are
still and several readings agree; `referee` turns a reading into a game input (zones, kept
dice, counts, the 4D square) or a reasoned request to throw again; the scoreboard's store
applies it through the rules engine; `journal` writes every input and every effect to SQLite
before it is carried out; `effects` carries them out on the tower (lights, dispensers).
`config` reads `tower.toml`. The vision pipeline and the rules engine stay pure: only this
package joins them to the hardware and the network.
"""
