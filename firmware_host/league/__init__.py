"""The league: several towers, one league, over an MQTT broker.

Each tower publishes its journal, action by action, under its own topic (`publisher`), with a
retained status and a last will; the league takes them in (`ingest`), keeps them in its own
SQLite file (`store`), rebuilds every table's game through the rules engine, and counts the
season's standings (`standings`) and a tournament night's bracket (`bracket`); `board` shows
it all on a Flask site, live. `messages` says what goes on the wire, `broker` where the broker
is (and starts a local Mosquitto for the demo, the bench and the tests).

The league never imports the controller, the camera, the vision or the hardware: a tower is
only what it publishes.
"""
