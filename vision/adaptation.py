"""A profile's adaptation of the face network to one bar's dice: its last layer, refitted.

The face network (`vision.face_net`) learnt dice of many kinds; a bar's own dice (dark,
marbled, with red pips) may lie where it hesitates. Calibration shows it a few dozen patches
of those dice with their values (`fit`): the network's last layer, a linear map from the 64
features the rest of the network computes to the seven classes' logits, is refitted on them,
pulled towards the shipped weights so that a few patches move it only where they agree
(a ridge toward the original layer, not a new classifier); only the rows of the classes shown
move. Computed on the CPU in a second or two; the rest of the network, and every rule that
reads its probabilities, stay as they are.

    adaptation = fit(features, labels, *net.classifier(), model=net.digest)
    profile = replace(profile, adaptation=adaptation)
    read_dice(image, profile, readers=readers)  # the face network reads with the refitted layer

An adaptation is tied to the model file it was computed with (its SHA-256): with another
model, its weights mean nothing, so `adapted` ignores it with a one-line warning.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from vision.face_net import CLASSES, FaceNet

log = logging.getLogger(__name__)

#: Pull towards the shipped layer, per weight, against the mean loss over the patches: a few
#: dozen patches move the layer only as far as they agree.
PULL = 0.2
#: ... times this for the rows of the values: "no face" moves more freely (what the network
#: takes for a blank on these dice is most of what it misses on them), a value's row less (a
#: face read more surely is also, now and then, a face read wrong).
VALUE_PULL = 5.0
#: Gradient steps at most (L-BFGS): the problem is small and smooth.
MAX_STEPS = 300


@dataclass(frozen=True, eq=False)  # one adaptation is itself: hashed as such
class Adaptation:
    """The refitted last layer (``weights``: classes x features, ``biases``: classes), the
    model file it was computed with (``model``, SHA-256 hex) and what it learnt from
    (``patches``: how many per class, in `CLASSES` order)."""

    model: str
    weights: np.ndarray
    biases: np.ndarray
    patches: tuple[int, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "patches": list(self.patches),
                "weights": [[round(float(v), 6) for v in row] for row in self.weights],
                "biases": [round(float(v), 6) for v in self.biases]}

    @classmethod
    def from_dict(cls, data: Any) -> Adaptation:
        """An adaptation from its JSON form; ValueError saying what is wrong."""
        if not isinstance(data, dict) or not isinstance(data.get("model"), str):
            raise ValueError("an adaptation is an object with the model's digest")
        try:
            weights = np.asarray(data["weights"], np.float64)
            biases = np.asarray(data["biases"], np.float64)
            patches = tuple(int(n) for n in data.get("patches") or ())
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"an adaptation's weights are not numbers ({exc})") from None
        if (weights.ndim != 2 or weights.shape[0] != len(CLASSES)
                or biases.shape != (len(CLASSES),) or not np.all(np.isfinite(weights))
                or not np.all(np.isfinite(biases))):
            raise ValueError(f"an adaptation has {len(CLASSES)} rows of finite weights and "
                             "biases")
        return cls(data["model"], weights, biases, patches)

    def logits(self, features: np.ndarray) -> np.ndarray:
        """(N, classes) logits of features (N, F)."""
        return np.asarray(features, np.float64) @ self.weights.T + self.biases


def softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise softmax, in float64."""
    z = np.asarray(logits, np.float64)
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def fit(features: np.ndarray, labels: np.ndarray, weights: np.ndarray, biases: np.ndarray,
        *, model: str, pull: float | None = None, sample_weights: np.ndarray | None = None
        ) -> Adaptation:
    """The last layer refitted on ``features`` (N, F) of patches with ``labels`` (N, indices
    into `CLASSES`), starting from and pulled towards ``weights`` and ``biases``: the mean
    cross-entropy (each class weighing as much as the others, ``sample_weights`` within
    them) plus ``pull`` (default PULL) times the squared distance to the original layer.
    Deterministic."""
    # Only calibration fits: a reading (and `import vision`) never loads the optimiser.
    from scipy.optimize import minimize

    pull = PULL if pull is None else pull
    x = np.asarray(features, np.float64)
    y = np.asarray(labels, np.int64)
    w0, b0 = np.asarray(weights, np.float64), np.asarray(biases, np.float64)
    k, f = w0.shape
    counts = np.bincount(y, minlength=k)
    given = np.ones(len(y)) if sample_weights is None else np.asarray(sample_weights, float)
    # Classes weigh alike: a few patches of a rare face must not be drowned by the common.
    share = given / np.maximum(counts[y], 1)
    share = share / max(float(share.sum()), 1e-12)
    onehot = np.eye(k)[y]
    start = np.concatenate([w0.ravel(), b0])
    # Only the rows of the classes shown move: a face no patch shows keeps its row, or it
    # would be pushed down for every die (the seen faces' rows rising on these dice suffice).
    # "No face" moves only when every face was shown: learnt against some faces only, it
    # comes to mean the others (ivory dice showing 3, 4 and 6 made every 1, 2 and 5 a blank).
    moves = (counts > 0).astype(np.float64)
    moves[0] *= float(np.all(counts[1:] > 0))
    rows = np.full(k, pull)
    rows[1:] *= VALUE_PULL

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w = np.where(moves[:, None] > 0, theta[: k * f].reshape(k, f), w0)
        b = np.where(moves > 0, theta[k * f:], b0)
        p = softmax(x @ w.T + b)
        value = -float(np.sum(share * np.log(np.maximum(p[np.arange(len(y)), y], 1e-12))))
        grad_logits = (p - onehot) * share[:, None]
        dw = (grad_logits.T @ x + 2 * rows[:, None] * (w - w0)) * moves[:, None]
        db = (grad_logits.sum(axis=0) + 2 * rows * (b - b0)) * moves
        value += float(np.sum(rows[:, None] * (w - w0) ** 2)) + float(
            np.sum(rows * (b - b0) ** 2))
        return value, np.concatenate([dw.ravel(), db])

    if len(y):
        theta = minimize(loss, start, jac=True, method="L-BFGS-B",
                         options={"maxiter": MAX_STEPS}).x
    else:
        theta = start
    weights_out = np.where(moves[:, None] > 0, theta[: k * f].reshape(k, f), w0)
    return Adaptation(model, weights_out, np.where(moves > 0, theta[k * f:], b0),
                      tuple(int(n) for n in counts))


class AdaptedNet(FaceNet):
    """The face network with a profile's last layer: what a reading with that profile reads
    with (`vision.readers.Readers.with_profile`)."""

    def __init__(self, base: FaceNet, adaptation: Adaptation) -> None:
        # The base's loaded network is shared, not loaded again.
        self.__dict__.update(base.__dict__)
        self.base = base
        self.adaptation = adaptation

    def probabilities(self, patches: list[np.ndarray]) -> np.ndarray:
        if not patches:
            return np.zeros((0, len(CLASSES)), np.float32)
        return softmax(self.adaptation.logits(self.base.features(patches))).astype(np.float32)


def adapted(base: FaceNet, adaptation: Adaptation | None) -> FaceNet | None:
    """The network with ``adaptation``'s last layer, or None: without one, or when it was
    computed with another model file than ``base``'s (said once, in one line)."""
    if adaptation is None:
        return None
    if adaptation.model != base.digest:
        _warn_other_model(adaptation.model[:12], base.digest[:12])
        return None
    if adaptation.weights.shape != base.classifier()[0].shape:
        _warn_other_model(adaptation.model[:12], base.digest[:12])
        return None
    return AdaptedNet(base, adaptation)


@lru_cache(maxsize=16)
def _warn_other_model(theirs: str, ours: str) -> None:
    log.warning("the profile's adaptation to its dice was computed with another face network "
                "(%s, this one %s): ignored; calibrate again to adapt it", theirs, ours)
