"""Image to dice: find each die in a photo of the tray and read its top face.

Public names::

    read_dice(image, profile=None) -> list[Die]
    load_image(path) -> BGR uint8 array        (raises ImageError)
    annotate(image, dice) -> BGR copy with outlines and values drawn
    Die, REASONS, Profile, ImageError

This package is what runs at the bar; `vision/pipeline.py` reads as the steps of a reading.
The lab (the renderer, benchmarks, training) is `vision.lab`, which nothing here imports.
"""

from vision.annotate import annotate
from vision.image_io import ImageError, load_image
from vision.pipeline import read_dice
from vision.profile import Profile
from vision.types import REASONS, Die

__all__ = ["REASONS", "Die", "ImageError", "Profile", "annotate", "load_image", "read_dice"]
