"""The tower's devices (seat lights, status LED, ring light, buttons, token dispensers)."""
