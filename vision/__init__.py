"""Image to dice: find each die in a photo of the tray and read its top face."""
