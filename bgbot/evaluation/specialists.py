"""Specialist networks by position class, and the encodings they may use.

A :class:`ClassNets` holds one :class:`bgbot.evaluation.network.ValueNet` per position class (GNU Backgammon's
split, eval.c ``ClassifyPosition``): ``contact``, ``crashed`` and ``race`` (race includes the bear-off positions
until the exact end-game layer serves them). Each net names its own input encoding in its config; the encodings
known here are in :data:`ENCODERS`:

* ``"tesauro196+expert7/v1"`` (203 inputs): :func:`bgbot.evaluation.encoding.encode`;
* ``"tesauro196+expert7+gnubg50/v2"`` (253 inputs): v1 followed by the 25 GNU Backgammon-class features of each side
  (:func:`bgbot.evaluation.features.features`: the side on roll's, then the opponent's).

:class:`ClassEvaluator` classifies a batch once and sends each class's rows to its net's sparse evaluator
(:class:`bgbot.evaluation.network.Evaluator` for v1, :class:`EvaluatorV2` for v2). Use :func:`evaluator_for` to get the
right evaluator for any loaded net.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import numpy as np
import torch
from torch import nn

from bgbot.errors import BgbotError
from bgbot.evaluation import classes, encoding, features
from bgbot.evaluation.network import EvaluationError, Evaluator, NetConfig, ValueNet
from bgbot.rules.outcomes import equity

ENCODING_V2 = "tesauro196+expert7+gnubg50/v2"
N_V2 = encoding.N_FEATURES + 2 * features.N_SIDE


def encode_v2(positions: np.ndarray) -> np.ndarray:
    """Encoding v2, ``(M, 26)`` int8 (side on roll) -> ``(M, 253)`` float32: v1's 203 inputs, then
    :func:`bgbot.evaluation.features.features`. Raises :class:`bgbot.evaluation.encoding.EncodingError` on bad input."""
    x = np.empty((len(np.asarray(positions)), N_V2), dtype=np.float32)
    encoding.encode(positions, out=x[:, : encoding.N_FEATURES])
    features.features(positions, out=x[:, encoding.N_FEATURES :])
    return x


ENCODERS: dict[str, tuple[Callable[[np.ndarray], np.ndarray], int]] = {
    encoding.ENCODING_VERSION: (encoding.encode, encoding.N_FEATURES),
    ENCODING_V2: (encode_v2, N_V2),
}
"""Encoding version -> (encode function, number of inputs)."""

NET_CLASSES = (classes.PositionClass.CONTACT, classes.PositionClass.CRASHED, classes.PositionClass.RACE)
"""The position classes with a net of their own, in the order of their stored codes (:func:`classify`: 1, 2, 3)."""
CLASSES = tuple(c.label for c in NET_CLASSES)
"""Their names, ``("contact", "crashed", "race")``: the keys of :class:`ClassNets` (and of its checkpoints)."""
OVER, CONTACT, CRASHED, RACE = (
    c.stored for c in (classes.PositionClass.OVER, *NET_CLASSES)
)  # the codes :func:`classify` returns


class ClassNetsError(BgbotError):
    """Specialist nets that cannot be built: an unknown class or encoding, or inputs that do not fit it."""


_FROM_CLASSES = classes.STORED_CODES
"""``bgbot.evaluation.classes`` code -> ours (:attr:`bgbot.evaluation.classes.PositionClass.stored`)."""


def classify(positions: np.ndarray) -> np.ndarray:
    """Position classes ``(N, 26)`` int8 -> ``(N,)`` int8: 0 over, 1 contact, 2 crashed, 3 race (no contact left,
    the bear-off classes included: the evaluator values those from the databases and never asks a net).

    From :func:`bgbot.evaluation.classes.classify_batch` (GNU Backgammon's ``ClassifyPosition``, crashed included).
    """
    return _FROM_CLASSES[classes.classify_batch(np.asarray(positions, dtype=np.int8))]


class ClassNets(nn.Module):
    """One :class:`ValueNet` per class of :data:`CLASSES`, ``nets[name]``; each with its own encoding."""

    is_class_nets = True

    def __init__(self, configs: dict[str, NetConfig]) -> None:
        super().__init__()
        if set(configs) != set(CLASSES):
            raise ClassNetsError(f"specialist nets are {list(CLASSES)}, got {sorted(configs)}")
        for name, cfg in configs.items():
            if cfg.encoding_version not in ENCODERS:
                raise ClassNetsError(f"net {name!r}: unknown encoding {cfg.encoding_version!r}; known {list(ENCODERS)}")
            if cfg.n_inputs != ENCODERS[cfg.encoding_version][1]:
                raise ClassNetsError(
                    f"net {name!r}: {cfg.n_inputs} inputs, encoding {cfg.encoding_version!r} has "
                    f"{ENCODERS[cfg.encoding_version][1]}"
                )
        self.nets = nn.ModuleDict({name: ValueNet(configs[name]) for name in CLASSES})

    def net(self, name: str) -> ValueNet:
        """The net of class ``name`` (one of :data:`CLASSES`)."""
        return cast(ValueNet, self.nets[name])

    @property
    def config(self) -> NetConfig:
        """The contact net's config (what a single-net caller reads: hidden units, encoding)."""
        return self.net("contact").config

    def configs(self) -> dict[str, NetConfig]:
        """Each class's net config."""
        return {name: self.net(name).config for name in CLASSES}

    def loss(self, positions: np.ndarray, targets: np.ndarray) -> torch.Tensor:
        """Mean squared error over the five outputs, each position through its class's net (autograd on).

        ``positions`` ``(K, 26)`` int8, ``targets`` ``(K, 5)`` float32; finished games (class 0) go to the race net.
        Each encoding of :data:`ENCODERS` that a net reads is computed once for the whole batch (one call over ``K``
        rows costs about what one over a class's rows does) and each class's net takes its rows of it.
        """
        return self.loss_encoded(positions, targets, {})

    def loss_encoded(self, positions: np.ndarray, targets: np.ndarray, inputs: dict[str, np.ndarray]) -> torch.Tensor:
        """:meth:`loss` given some of the positions' encodings: ``inputs`` maps an encoding version of
        :data:`ENCODERS` to the positions' ``(K, n_inputs)`` float32 inputs (e.g. kept from move selection); those
        missing are computed here (and added to ``inputs``)."""
        cls = classify(positions)
        cls[cls == OVER] = RACE
        total = torch.zeros(())
        for code, name in enumerate(CLASSES, start=1):
            rows = np.flatnonzero(cls == code)
            if len(rows) == 0:
                continue
            net = self.net(name)
            version = net.config.encoding_version
            if version not in inputs:
                inputs[version] = ENCODERS[version][0](positions)
            x = torch.from_numpy(inputs[version][rows])
            out = net(x)
            total = total + ((out - torch.from_numpy(targets[rows])) ** 2).sum()
        return total / (5 * max(len(positions), 1))


def from_single(net: ValueNet, encoding_version: str = ENCODING_V2) -> ClassNets:
    """Specialist nets that start as copies of one net: the inputs they share with it keep its weights, new inputs
    start at weight 0, so every specialist computes exactly what ``net`` does until trained.

    Raises:
        ClassNetsError: ``net``'s encoding is not a prefix of ``encoding_version``'s inputs (v1 is of v2).
    """
    src = net.config.encoding_version
    if not (src == encoding_version or (src == encoding.ENCODING_VERSION and encoding_version == ENCODING_V2)):
        raise ClassNetsError(f"cannot start {encoding_version!r} nets from a net on encoding {src!r}")
    n_in = ENCODERS[encoding_version][1]
    cfg = NetConfig(
        n_inputs=n_in, n_hidden=net.config.n_hidden, activation=net.config.activation, encoding_version=encoding_version
    )
    nets = ClassNets({name: cfg for name in CLASSES})
    with torch.no_grad():
        for sub in (nets.net(name) for name in CLASSES):
            sub.hidden.weight.zero_()
            sub.hidden.weight[:, : net.config.n_inputs] = net.hidden.weight
            sub.hidden.bias.copy_(net.hidden.bias)
            sub.out.weight.copy_(net.out.weight)
            sub.out.bias.copy_(net.out.bias)
    return nets


def fresh(n_hidden: int = 128, activation: str = "sigmoid", encoding_version: str = ENCODING_V2) -> ClassNets:
    """Randomly initialised specialist nets (torch's default initialisation; seed torch first)."""
    cfg = NetConfig(
        n_inputs=ENCODERS[encoding_version][1],
        n_hidden=n_hidden,
        activation=activation,
        encoding_version=encoding_version,
    )
    return ClassNets({name: cfg for name in CLASSES})


_OFF_SKIP = 3
"""Each side's first three features (off1, off2, off3) depend on its borne-off count only: :class:`EvaluatorV2` folds
them into the borne-off rows of the first layer's table."""
_V2_DENSE = tuple(
    c
    for side in (0, features.N_SIDE)
    for c in range(encoding.N_FEATURES + side + _OFF_SKIP, encoding.N_FEATURES + side + features.N_SIDE)
)
_V2_OFF = [[encoding.N_FEATURES + side + k for k in range(_OFF_SKIP)] for side in (0, features.N_SIDE)]


class EvaluatorV2(Evaluator):
    """:class:`bgbot.evaluation.network.Evaluator` for one net on encoding v2: v1's 203 inputs through the sparse first
    layer (an embedding-bag over ``encoding.sparse_encode``); of the 50 feature inputs (columns 203..252), each side's
    borne-off features (off1..off3, functions of its borne-off count) folded into the table's borne-off rows, the other
    44 as a dense ``(M, 44) @ (44, H)`` product added to it. Equal to the dense product over :func:`encode_v2` within
    float32 rounding (``tests/test_specialists.py``)."""

    encoding_version = ENCODING_V2

    @property
    def dense_columns(self) -> tuple[int, ...]:
        """The feature inputs' columns 203..252 but the borne-off ones (203..205, 228..230)."""
        return _V2_DENSE

    def _fold_rows(self, table: torch.Tensor, w1: torch.Tensor) -> None:
        """Each side's off1..off3 by its borne-off count: ``table[off row n] += W1[:, off columns] @ OFF_VALUES[n]``."""
        values = torch.from_numpy(features.OFF_VALUES)  # (16, 3)
        for side, cols in enumerate(_V2_OFF):
            lo = encoding._R_OFF + 16 * side
            table[lo : lo + 16] += values @ w1[:, cols].T

    def dense_inputs(self, positions: np.ndarray) -> np.ndarray:
        """The inputs of :attr:`dense_columns` ``(M, 44)`` float32 (:func:`bgbot.evaluation.features.features` less
        the borne-off ones; a transposed view of the feature-major array, which the product takes as it is)."""
        return features.features_t_and_masks(positions, _OFF_SKIP)[0].T

    def inputs(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """The sparse rows of v1's inputs and the dense inputs (a transposed view), from one pass over the checkers
        (:func:`bgbot.evaluation.features.v2_parts` hands its point masks and borne-off counts to
        ``encoding.sparse_encode``)."""
        f_t, masks, off = features.v2_parts(positions, _OFF_SKIP)
        return encoding.sparse_encode(positions, masks, off), f_t.T


def _rows_view(x: np.ndarray) -> np.ndarray:
    """A C-contiguous 2-D array ``(M, K)`` as ``(M,)`` opaque rows: gathering and scattering whole rows is then one
    copy per row instead of one per element."""
    return x.view(np.dtype((np.void, x.shape[1] * x.itemsize))).reshape(len(x))


def _rows(x: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``x[index]`` for a C-contiguous 2-D array, through :func:`_rows_view`."""
    return _rows_view(x)[index].view(x.dtype).reshape(len(index), x.shape[1])


_EVALUATORS: dict[str, type[Evaluator]] = {encoding.ENCODING_VERSION: Evaluator, ENCODING_V2: EvaluatorV2}
"""Encoding version -> the sparse evaluator class for one net on it."""


class ClassEvaluator(Evaluator):
    """``evaluate((M, 26) int8) -> (M, 5) float32``: each position through the net of its class (finished games, class
    0, through the race net: callers score them exactly before, see ``bgbot.evaluation.evaluator``)."""

    def __init__(self, net: ClassNets, batch_size: int = 65536, check: bool = True) -> None:  # noqa: D107
        if not isinstance(net, ClassNets):
            raise ClassNetsError(f"ClassEvaluator needs ClassNets, got {type(net).__name__}")
        self.net = net  # type: ignore[assignment]  # the specialists instead of one ValueNet
        self.class_nets = net
        self.batch_size = batch_size
        self.check = check
        self._evaluators = {
            name: _EVALUATORS[net.net(name).config.encoding_version](net.net(name), batch_size, check=False)
            for name in CLASSES
        }

    def evaluate(self, positions: np.ndarray) -> np.ndarray:
        """Probabilities ``(M, 5)`` float32 (win, wg, wbg, lg, lbg) for positions ``(M, 26)`` int8 (side on roll)."""
        positions = np.asarray(positions)
        return self.evaluate_classified(positions, classes.classify_batch(np.asarray(positions, dtype=np.int8)))

    def evaluate_classified(self, positions: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """:meth:`evaluate` given the positions' :func:`bgbot.evaluation.classes.classify_batch` codes ``(M,)`` int8
        (the dispatch in ``bgbot.evaluation.evaluator`` has them already)."""
        positions = np.ascontiguousarray(positions, dtype=np.int8)
        cls = _FROM_CLASSES[codes]
        cls[cls == OVER] = RACE
        by_class = [np.flatnonzero(cls == code) for code in range(1, len(CLASSES) + 1)]
        order = np.concatenate(by_class)  # the batch by class: each class's rows one slice
        bounds = np.cumsum([0] + [len(rows) for rows in by_class])
        positions = _rows(positions, order)
        # the inputs once for the whole batch: the sparse rows (every encoding here starts with v1's) and each
        # evaluator type's dense inputs, computed together by the first type that has dense columns
        evs = [self._evaluators[name] for name in CLASSES]
        first = next((ev for ev in evs if ev.dense_columns), evs[0])
        slots, d0 = first.inputs(positions)
        dense: dict[type, np.ndarray] = {} if d0 is None else {type(first): d0}
        sorted_out = np.empty((len(positions), 5), dtype=np.float32)
        n = self.batch_size
        with torch.inference_mode(), np.errstate(invalid="ignore", over="ignore"):  # damaged weights: reported below
            for k, name in enumerate(CLASSES):
                lo, hi = int(bounds[k]), int(bounds[k + 1])
                if lo == hi:
                    continue
                ev = self._evaluators[name]
                if ev.dense_columns and type(ev) not in dense:
                    dense[type(ev)] = ev.dense_inputs(positions)
                d = dense.get(type(ev))
                table = ev._hidden_table()
                for i in range(lo, hi, n):
                    j = min(i + n, hi)
                    sorted_out[i:j] = ev._forward_sparse(slots[i:j], table, None if d is None else d[i:j])
        out = np.empty_like(sorted_out)
        _rows_view(out)[order] = _rows_view(sorted_out)
        if self.check and not np.isfinite(out).all():
            raise EvaluationError(
                f"the specialist nets gave NaN or infinite probabilities for "
                f"{int((~np.isfinite(out)).any(axis=1).sum())} of {len(out)} positions: damaged weights or divergence"
            )
        return out

    def equities(self, positions: np.ndarray) -> np.ndarray:
        """Cubeless money equity ``(M,)`` float32 for the side on roll."""
        return equity(self.evaluate(positions))


def evaluator_for(net: ValueNet | ClassNets, batch_size: int = 65536, check: bool = True) -> Evaluator:
    """The evaluator of a loaded net (:func:`bgbot.evaluation.checkpoint.load`): a :class:`ClassEvaluator` for
    specialist nets (checkpoint format 2), the sparse evaluator of its encoding for one net (:class:`EvaluatorV2` for
    v2, :class:`bgbot.evaluation.network.Evaluator` otherwise: it refuses an encoding it does not serve)."""
    if isinstance(net, ClassNets):
        return ClassEvaluator(net, batch_size, check)
    return _EVALUATORS.get(net.config.encoding_version, Evaluator)(net, batch_size, check)
