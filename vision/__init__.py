"""Image to dice: find each die in a photo of the tray and read its top face.

Public names::

    read_dice(image, profile=None, *, readers=None) -> list[Die]
    Readers.from_files(face=None, finder=None, lean=None), shipped_readers()
                                               the networks a reading uses (None: shipped)
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
from vision.readers import Readers
from vision.readers import shipped as shipped_readers
from vision.types import REASONS, Die

__all__ = ["REASONS", "Die", "ImageError", "Profile", "Readers", "annotate", "load_image",
           "read_dice", "shipped_readers"]
