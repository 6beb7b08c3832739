"""The vision lab: what measures, trains and tests the reader, and never runs at the bar.

- `render`: synthetic tray images with their truth (the tests', the simulated camera's and
  the trainings' trays);
- `scoring`, `benchmark` (`dicetower bench vision`), `rendered_bench`, `face_eval`: the
  reader scored against the dice-photos dataset and rendered trays;
- `net_training`, `face_net_train`, `lean_net_train`: training the face network and the lean
  check whose ONNX models `vision/models/` ships.

The tower side (`vision` outside this package) imports nothing from here.
"""
