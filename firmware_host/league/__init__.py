"""The league: several towers, one league, over an MQTT broker (docs/league.md).

Each tower publishes its journal, action by action, under its own topic (`publisher`, one
more subscriber of the tower's hub; `throwers` names who made each input, and the league
checks it), with a retained status and a last will; the league takes them in (`ingest`),
keeps them in its own SQLite file (`store`), rebuilds every table's game through the rules
engine, and counts the season's standings (`standings`) and a tournament night's bracket
(`bracket`); `board` (served by `server`, in `texts`' words) shows it all, live. `messages`
says what goes on the wire, `broker` where the broker is (and starts a local Mosquitto, or an
embedded broker, for the demo, the bench and the tests); `config` reads the league's own file,
`season` starts a new season's file from the last, `runner` starts its parts together;
`simtower`, `demo` and `benchmark` are simulated tables, `dicetower demo --league` and
`dicetower bench league`.

The league never imports the controller, the camera, the vision or the hardware: a tower is
only what it publishes.
"""
