"""The scoreboard: a Flask application showing the game live on every phone in the bar."""
