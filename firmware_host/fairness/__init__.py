"""Are the tower's dice fair? `analysis` tests faces (pure); `watch` reads them from a journal."""
