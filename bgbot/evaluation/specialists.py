"""Specialist networks by position class, and the encodings they may use.

A :class:`ClassNets` holds one :class:`bgbot.evaluation.network.ValueNet` per position class (GNU Backgammon's
split, eval.c ``ClassifyPosition``): ``contact``, ``crashed`` and ``race`` (race includes the bear-off positions
until the exact end-game layer serves them). Each net names its own input encoding in its config; the encodings
known here are in :data:`ENCODERS`:

* ``"tesauro196+expert7/v1"`` (203 inputs): :func:`bgbot.evaluation.encoding.encode`;
* ``"tesauro196+expert7+gnubg50/v2"`` (253 inputs): v1 followed by the 25 GNU Backgammon-class features of each side
  (:func:`bgbot.evaluation.features.features`: the side on roll's, then the opponent's);
* ``"tesauro196+expert7+gnubg50+gnubgrace30/v3"`` (283 inputs): v2 followed by the 15 inputs of GNU Backgammon's race
  net that v2 lacks, per side (:func:`bgbot.evaluation.race_inputs.race_inputs`: one-hot borne-off counts and
  crossovers), meant for the race net (:func:`with_race_encoding`).

Each encoding's inputs start with the previous one's (v1 a prefix of v2, v2 of v3): :func:`widen` turns a net into one
on a wider encoding that computes the same values (the new inputs at weight 0).

:class:`ClassEvaluator` classifies a batch once and sends each class's rows to its net's sparse evaluator
(:class:`bgbot.evaluation.network.Evaluator` for v1, :class:`EvaluatorV2` for v2, :class:`EvaluatorV3` for v3). Use :func:`evaluator_for` to get the
right evaluator for any loaded net.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import numpy as np
import torch
from torch import nn

from bgbot.errors import BgbotError
from bgbot.evaluation import classes, encoding, features, race_inputs
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


ENCODING_V3 = "tesauro196+expert7+gnubg50+gnubgrace30/v3"
N_V3 = N_V2 + 2 * race_inputs.N_SIDE


def encode_v3(positions: np.ndarray) -> np.ndarray:
    """Encoding v3, ``(M, 26)`` int8 (side on roll) -> ``(M, 283)`` float32: v2's 253 inputs, then
    :func:`bgbot.evaluation.race_inputs.race_inputs` (30). Raises :class:`bgbot.evaluation.encoding.EncodingError` on
    bad input."""
    x = np.empty((len(np.asarray(positions)), N_V3), dtype=np.float32)
    encoding.encode(positions, out=x[:, : encoding.N_FEATURES])
    features.features(positions, out=x[:, encoding.N_FEATURES : N_V2])
    race_inputs.race_inputs(positions, out=x[:, N_V2:])
    return x


ENCODERS: dict[str, tuple[Callable[[np.ndarray], np.ndarray], int]] = {
    encoding.ENCODING_VERSION: (encoding.encode, encoding.N_FEATURES),
    ENCODING_V2: (encode_v2, N_V2),
    ENCODING_V3: (encode_v3, N_V3),
}
"""Encoding version -> (encode function, number of inputs)."""
WIDER: dict[str, str] = {encoding.ENCODING_VERSION: ENCODING_V2, ENCODING_V2: ENCODING_V3}
"""Encoding version -> the next encoding, whose inputs start with its own."""


def _is_prefix(narrow: str, wide: str) -> bool:
    """Whether encoding ``narrow``'s inputs are the first inputs of encoding ``wide`` (the same one included)."""
    while narrow != wide and narrow in WIDER:
        narrow = WIDER[narrow]
    return narrow == wide


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
        object.__setattr__(self, "cube_nets", None)  # a plain attribute: not a submodule (see attach_cube_nets)

    cube_nets: ClassNets | None
    """Separate nets that answer the cube decisions (:func:`attach_cube_nets`), or None: these nets answer both."""

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


def attach_cube_nets(nets: ClassNets, cube: ClassNets | None) -> ClassNets:
    """Give ``nets`` (the play nets) separate nets ``cube`` for cube decisions, or take them away (None); returns
    ``nets``.

    The cube nets are a plain attribute, not a submodule: they are not in ``nets.parameters()`` or
    ``nets.state_dict()``, so training fits the play nets and carries the cube nets as they are;
    :func:`bgbot.evaluation.checkpoint.save` stores them (checkpoint format 3) and
    :func:`evaluator_for` gives them their own evaluator (:attr:`ClassEvaluator.cube_evaluator`), which every cube
    decision reads through :func:`bgbot.evaluation.evaluator.for_cube`.

    Raises:
        ClassNetsError: ``cube`` is not :class:`ClassNets` or itself has cube nets.
    """
    if cube is not None:
        if not isinstance(cube, ClassNets):
            raise ClassNetsError(f"cube nets must be specialist nets (ClassNets), got {type(cube).__name__}")
        if cube.cube_nets is not None:
            raise ClassNetsError("cube nets cannot have cube nets of their own")
        cube.eval()
    object.__setattr__(nets, "cube_nets", cube)
    return nets


def from_single(net: ValueNet, encoding_version: str = ENCODING_V2) -> ClassNets:
    """Specialist nets that start as copies of one net: the inputs they share with it keep its weights, new inputs
    start at weight 0, so every specialist computes exactly what ``net`` does until trained.

    Raises:
        ClassNetsError: ``net``'s encoding is not a prefix of ``encoding_version``'s inputs (v1 is of v2).
    """
    src = net.config.encoding_version
    if encoding_version not in ENCODERS or not _is_prefix(src, encoding_version):
        raise ClassNetsError(f"cannot start {encoding_version!r} nets from a net on encoding {src!r}")
    wide = widen(net, encoding_version)
    nets = ClassNets({name: wide.config for name in CLASSES})
    with torch.no_grad():
        for sub in (nets.net(name) for name in CLASSES):
            sub.load_state_dict(wide.state_dict())
    return nets


def widen(net: ValueNet, encoding_version: str | None = None, n_hidden: int | None = None) -> ValueNet:
    """A copy of ``net`` with more inputs (the wider encoding ``encoding_version``) and/or more hidden units
    (``n_hidden``) that computes exactly what ``net`` does until trained: the inputs it shares with ``net`` (the first
    ``net.config.n_inputs``) keep their weights and the new inputs start at weight 0; the first
    ``net.config.n_hidden`` hidden units keep theirs, and each new hidden unit has torch's default random input
    weights (seed torch first) and output weight 0, so it starts learning at once but changes no value. None keeps
    that dimension. ``net`` itself is not changed.

    Raises:
        ClassNetsError: ``encoding_version`` is unknown, or ``net``'s encoding is not a prefix of its inputs;
            ``n_hidden`` is fewer than ``net``'s hidden units.
    """
    src = net.config.encoding_version
    encoding_version = src if encoding_version is None else encoding_version
    if encoding_version not in ENCODERS or not _is_prefix(src, encoding_version):
        raise ClassNetsError(
            f"cannot widen a net on encoding {src!r} to {encoding_version!r}: its inputs are not a prefix of those"
        )
    hidden = net.config.n_hidden if n_hidden is None else n_hidden
    if hidden < net.config.n_hidden:
        raise ClassNetsError(f"cannot widen a net of {net.config.n_hidden} hidden units to {hidden}: fewer units")
    cfg = NetConfig(
        n_inputs=ENCODERS[encoding_version][1],
        n_hidden=hidden,
        activation=net.config.activation,
        encoding_version=encoding_version,
    )
    wide = ValueNet(cfg)
    n_in, n_h = net.config.n_inputs, net.config.n_hidden
    with torch.no_grad():
        wide.hidden.weight[:n_h].zero_()
        wide.hidden.weight[:n_h, :n_in] = net.hidden.weight
        wide.hidden.bias[:n_h] = net.hidden.bias
        wide.out.weight.zero_()
        wide.out.weight[:, :n_h] = net.out.weight
        wide.out.bias.copy_(net.out.bias)
    return wide.train(net.training)


def with_race_encoding(nets: ClassNets, encoding_version: str) -> ClassNets:
    """Specialist nets equal to ``nets`` but for the race net, widened to ``encoding_version`` (:func:`widen`: the
    new inputs at weight 0, so the result values every position exactly as ``nets`` does). The contact and crashed
    nets are copies; ``nets`` is not changed. The race net's own encoding returns a plain copy.

    Raises:
        ClassNetsError: the race net's encoding is not a prefix of ``encoding_version``'s inputs.
    """
    race = nets.net("race")
    if race.config.encoding_version == encoding_version:
        wide = race
    else:
        wide = widen(race, encoding_version)
    out = ClassNets({**nets.configs(), "race": wide.config})
    with torch.no_grad():
        for name in CLASSES:
            out.net(name).load_state_dict((wide if name == "race" else nets.net(name)).state_dict())
    return out.train(nets.training)


def with_hidden(nets: ClassNets, n_hidden: int) -> ClassNets:
    """Specialist nets equal to ``nets`` with every class net widened to ``n_hidden`` hidden units (:func:`widen`: the
    new units' output weights at 0, so the result values every position exactly as ``nets`` does; their input
    weights are torch's random defaults, seed torch first). ``nets`` is not changed; cube nets are not carried (see
    :func:`attach_cube_nets`).

    Raises:
        ClassNetsError: ``n_hidden`` is fewer than some class net's hidden units.
    """
    wide = {name: widen(nets.net(name), n_hidden=n_hidden) for name in CLASSES}
    out = ClassNets({name: net.config for name, net in wide.items()})
    with torch.no_grad():
        for name in CLASSES:
            out.net(name).load_state_dict(wide[name].state_dict())
    return out.train(nets.training)


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
_OFF_VALUES_T = torch.from_numpy(features.OFF_VALUES)  # (16, 3) float32: off1..off3 of each borne-off count


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
        for side, cols in enumerate(_V2_OFF):
            lo = encoding._R_OFF + 16 * side
            # the columns are a run: a slice copied as the gather w1[:, cols] would copy it (the same product)
            table[lo : lo + 16] += _OFF_VALUES_T @ w1[:, cols[0] : cols[-1] + 1].contiguous().T

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


_R_SIDE = race_inputs.N_SIDE
_V3_OFF = [[N_V2 + side * _R_SIDE + k for k in range(race_inputs.N_OFF)] for side in (0, 1)]
_V3_CROSS = [N_V2 + side * _R_SIDE + race_inputs.N_OFF for side in (0, 1)]


def _crossover_rows() -> tuple[np.ndarray, np.ndarray]:
    """Each side's crossovers as a share of the sparse board rows: ``(encoding.N_SPARSE_ROWS,)`` float32 twice, the
    side on roll's and the opponent's (row ``j * 31 + v + 15`` holds board index ``j`` with signed count ``v``)."""
    mine = np.zeros(encoding.N_SPARSE_ROWS, dtype=np.float64)
    theirs = np.zeros(encoding.N_SPARSE_ROWS, dtype=np.float64)
    for j in range(1, 25):  # the points; neither bar counts
        for v in range(1, 16):
            mine[j * encoding._V + v + 15] = v * ((j - 1) // 6) / race_inputs.CROSSOVER_SCALE
            theirs[j * encoding._V - v + 15] = v * ((24 - j) // 6) / race_inputs.CROSSOVER_SCALE
    return mine.astype(np.float32), theirs.astype(np.float32)


_CROSS_ROWS = _crossover_rows()


class EvaluatorV3(EvaluatorV2):
    """:class:`EvaluatorV2` for one net on encoding v3 (the race net's): the 30 race inputs
    (:mod:`bgbot.evaluation.race_inputs`) all fold into the first layer's table, so it costs what v2 costs. Each
    side's one-hot borne-off units go into that side's borne-off rows; each side's crossovers, a sum over board
    indices of the count there times the quarters to cross, into the board rows. The dense inputs are v2's. Equal to
    the dense product over :func:`encode_v3` within float32 rounding (``tests/test_race_inputs.py``)."""

    encoding_version = ENCODING_V3

    @property
    def dense_key(self) -> type:
        """The dense inputs are v2's: a batch computes them once for both."""
        return EvaluatorV2

    def _fold_rows(self, table: torch.Tensor, w1: torch.Tensor) -> None:
        """v2's folding, then the borne-off units (row ``n`` of a side gets ``W1[:, off_eq<n>]``, n = 1..14) and the
        crossovers (each board row gets its crossovers times ``W1[:, crossovers]``)."""
        super()._fold_rows(table, w1)
        for side in (0, 1):
            lo = encoding._R_OFF + 16 * side
            table[lo + 1 : lo + 1 + race_inputs.N_OFF] += w1[:, _V3_OFF[side]].T
            table += torch.from_numpy(_CROSS_ROWS[side])[:, None] * w1[:, _V3_CROSS[side]][None, :]


def _rows_view(x: np.ndarray) -> np.ndarray:
    """A C-contiguous 2-D array ``(M, K)`` as ``(M,)`` opaque rows: gathering and scattering whole rows is then one
    copy per row instead of one per element."""
    return x.view(np.dtype((np.void, x.shape[1] * x.itemsize))).reshape(len(x))


def _rows(x: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``x[index]`` for a C-contiguous 2-D array, through :func:`_rows_view`."""
    return _rows_view(x)[index].view(x.dtype).reshape(len(index), x.shape[1])


_EVALUATORS: dict[str, type[Evaluator]] = {
    encoding.ENCODING_VERSION: Evaluator,
    ENCODING_V2: EvaluatorV2,
    ENCODING_V3: EvaluatorV3,
}
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
        self.cube_evaluator = None if net.cube_nets is None else ClassEvaluator(net.cube_nets, batch_size, check)
        """The cube nets' evaluator (:func:`attach_cube_nets`), or None: cube decisions read this evaluator's values
        (:func:`bgbot.evaluation.evaluator.for_cube`)."""

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
        dense: dict[type, np.ndarray] = {} if d0 is None else {first.dense_key: d0}
        sorted_out = np.empty((len(positions), 5), dtype=np.float32)
        n = self.batch_size
        with torch.inference_mode(), np.errstate(invalid="ignore", over="ignore"):  # damaged weights: reported below
            for k, name in enumerate(CLASSES):
                lo, hi = int(bounds[k]), int(bounds[k + 1])
                if lo == hi:
                    continue
                ev = self._evaluators[name]
                if ev.dense_columns and ev.dense_key not in dense:
                    dense[ev.dense_key] = ev.dense_inputs(positions)
                d = dense.get(ev.dense_key)
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
