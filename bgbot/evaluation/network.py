"""A TD-Gammon-style value network and a batched evaluator over positions.

The net maps encoded positions (``bgbot.evaluation.encoding``) to the five cumulative outcome probabilities of the side on
roll, GNU Backgammon's convention: ``(win, win_gammon, win_backgammon, lose_gammon, lose_backgammon)``.

Consistency by construction: the output layer gives five logits ``z`` and the net returns

    win = s(z0),  win_gammon = win * s(z1),  win_backgammon = win_gammon * s(z2),
    lose_gammon = (1 - win) * s(z3),  lose_backgammon = lose_gammon * s(z4)

(``s`` the logistic function): the heads are the conditional probabilities P(gammon | win), P(backgammon | gammon) ...,
so ``wbg <= wg <= w`` and ``lbg <= lg <= 1 - w`` always hold and every head keeps a gradient (a clamp or a min would cut
it off wherever the constraint binds).

Finished games are not the net's business: the caller checks ``board.game_result`` first and uses the exact result
(e.g. all my checkers off = certain win); race positions get the same net as contact ones, with the encoding's race
flag and pip counts as inputs.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from bgbot.errors import BgbotError
from bgbot.evaluation import encoding
from bgbot.rules.outcomes import equity

ACTIVATIONS = {"sigmoid": nn.Sigmoid, "tanh": nn.Tanh, "relu": nn.ReLU}


class EvaluationError(BgbotError):
    """A network whose outputs are NaN or infinite: the work stops instead of going on with meaningless numbers."""


class NetworkConfigError(BgbotError):
    """A network config that cannot describe a ValueNet (unknown field, activation or encoding)."""


@dataclass(frozen=True)
class NetConfig:
    """Shape of a :class:`ValueNet`; stored in checkpoints and rebuilt from them."""

    n_inputs: int = encoding.N_FEATURES
    """Width of the input layer; equals the encoding's ``N_FEATURES``."""
    n_hidden: int = 128
    """Hidden units in the one hidden layer."""
    activation: str = "sigmoid"
    """Hidden activation: one of ``ACTIVATIONS`` ("sigmoid" as in TD-Gammon, "tanh", "relu")."""
    encoding_version: str = encoding.ENCODING_VERSION
    """The input encoding the net was trained on (``bgbot.evaluation.encoding.ENCODING_VERSION``)."""

    def __post_init__(self) -> None:
        if self.activation not in ACTIVATIONS:
            raise NetworkConfigError(f"activation must be one of {sorted(ACTIVATIONS)}, got {self.activation!r}")
        if self.n_inputs < 1 or self.n_hidden < 1:
            raise NetworkConfigError(f"layer sizes must be positive, got {self.n_inputs!r}, {self.n_hidden!r}")

    def to_dict(self) -> dict:
        """Plain dict of the fields (JSON-able)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> NetConfig:
        """Inverse of :meth:`to_dict`. Raises :class:`NetworkConfigError` on unknown or missing fields."""
        names = {f.name for f in fields(cls)}
        if set(d) != names:
            raise NetworkConfigError(f"network config fields are {sorted(names)}, got {sorted(d)!r}")
        return cls(**d)


class ValueNet(nn.Module):
    """``encoded (M, n_inputs) float32 -> (M, 5) float32`` cumulative probabilities, see the module docstring."""

    def __init__(self, config: NetConfig | None = None) -> None:
        super().__init__()
        self.config = config or NetConfig()
        self.hidden = nn.Linear(self.config.n_inputs, self.config.n_hidden)
        self.act = ACTIVATIONS[self.config.activation]()
        self.out = nn.Linear(self.config.n_hidden, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = torch.sigmoid(self.out(self.act(self.hidden(x))))  # (M, 5) conditional probabilities
        win = s[:, 0]
        wg = win * s[:, 1]
        lg = (1 - win) * s[:, 3]
        return torch.stack([win, wg, wg * s[:, 2], lg, lg * s[:, 4]], dim=1)


def set_threads(n: int | None = None) -> int:
    """Set torch's intra-op threads to ``n`` (default 1) and return it.

    Inference (:class:`Evaluator`) is a chain of small torch ops (an embedding-bag, an activation, a 128 x 5 product)
    on batches of a few thousand positions, fastest on one thread; parallelism comes from processes (tournament
    workers, one thread each). Training may ask for more. One inter-op thread: evaluation is a chain of small ops.
    """
    n = n or 1
    torch.set_num_threads(n)
    if torch.get_num_interop_threads() != 1:
        try:
            torch.set_num_interop_threads(1)
        except RuntimeError:  # only settable before the first parallel op; the default is then kept
            pass
    return n


_IN_PLACE_ACTIVATIONS = {
    "sigmoid": torch.Tensor.sigmoid_,
    "tanh": torch.Tensor.tanh_,
    "relu": torch.Tensor.relu_,
}
"""Activations applied in place to a float32 tensor."""


def _row_entries(rows: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
    """Sparse rows ``(R, F)`` (``encoding.SPARSE_ROWS``) as padded lists of their non-zero entries: columns ``(R, K)``
    int64 and values ``(R, K)`` float32 (padding: column 0, value 0)."""
    nz = rows != 0
    k = max(int(nz.sum(axis=1).max()), 1)
    cols = np.zeros((len(rows), k), dtype=np.int64)
    vals = np.zeros((len(rows), k), dtype=np.float32)
    for r in range(len(rows)):
        c = np.flatnonzero(nz[r])
        cols[r, : len(c)], vals[r, : len(c)] = c, rows[r, c]
    return torch.from_numpy(cols), torch.from_numpy(vals)


_ROW_COLS, _ROW_VALS = _row_entries(encoding.SPARSE_ROWS)


_OFFSETS: dict[int, torch.Tensor] = {}
"""Bag width ``K`` -> the start offsets ``0, K, 2K, ...`` (int32) of the longest batch seen so far: :func:`bag_sum`
slices them instead of building them for every call."""


def bag_sum(index: np.ndarray, table: torch.Tensor) -> torch.Tensor:
    """``torch.nn.functional.embedding_bag(index, table, mode="sum")`` for fixed-width bags: rows ``index`` ``(M, K)``
    (int32; other integer types are converted) of ``table`` ``(R, H)`` float32 summed per row -> ``(M, H)`` float32.

    The same kernel on the same flattened indices and offsets as the functional form (which flattens a 2-D input and
    builds its offsets with ``torch.arange`` on every call), so the same values bit for bit
    (``tests/test_network.py``); without the functional form's argument checks and with the offsets kept between
    calls (the evaluators and the move filter call it several times a ply). An index out of ``0 .. R - 1`` raises
    torch's ``RuntimeError``, as the functional form does."""
    m, k = index.shape
    offsets = _OFFSETS.get(k)
    if offsets is None or len(offsets) < m:
        with torch.inference_mode(False):  # a plain tensor, usable with autograd too, even if made under inference
            offsets = _OFFSETS[k] = torch.arange(0, max(m, 8192) * k, k, dtype=torch.int32)
    flat = torch.from_numpy(np.ascontiguousarray(index, dtype=np.int32).reshape(-1))
    return torch.embedding_bag(table, flat, offsets[:m], False, 0)[0]


def _cumulative(s: np.ndarray) -> np.ndarray:
    """The five conditional probabilities ``(M, 5)`` float32 -> cumulative ones, as :meth:`ValueNet.forward`."""
    out = np.empty_like(s)
    out[:, 0] = s[:, 0]
    np.multiply(s[:, 0], s[:, 1], out=out[:, 1])
    np.multiply(out[:, 1], s[:, 2], out=out[:, 2])
    np.subtract(1.0, s[:, 0], out=out[:, 3])
    out[:, 3] *= s[:, 3]
    np.multiply(out[:, 3], s[:, 4], out=out[:, 4])
    return out


class Evaluator:
    """Inference over raw positions: ``evaluate((M, 26) int8) -> (M, 5) float32`` for the side on roll.

    Computes what :meth:`ValueNet.forward` computes on :func:`bgbot.evaluation.encoding.encode`'s inputs, on the net's
    current weights (an evaluator of a net that is being trained always sees its latest weights), without autograd,
    in chunks of at most ``batch_size`` rows. The first layer is not a dense product: every input vector is a sum of
    ``encoding.N_SLOTS`` fixed rows (:func:`bgbot.evaluation.encoding.sparse_encode`), so the hidden layer's
    pre-activations are a sum of as many rows of the table ``SPARSE_ROWS @ W1.T`` (the bias folded into the rows of
    the off-count slot), one ``torch.nn.functional.embedding_bag``: about 33 * H additions a position instead of
    203 * H multiply-adds and no input matrix at all. The table is rebuilt (:meth:`_hidden_table`) whenever the
    first layer's weights change (torch's in-place version counters and a random projection of the weights, which
    also sees writes through ``.data``). Equal to the dense product within float32
    rounding (``tests/test_network.py``).
    With ``check`` (the default) an output that is not finite raises :class:`EvaluationError`.
    Does not look at finished games: see the module docstring.
    """

    encoding_version = encoding.ENCODING_VERSION
    """The encoding whose nets this evaluator serves: its inputs ``0 .. encoding.N_FEATURES - 1`` are the sparse rows,
    the rest :attr:`dense_columns` (a subclass for a wider encoding overrides these and :meth:`dense_inputs`)."""

    @property
    def dense_columns(self) -> tuple[int, ...]:
        """Input columns outside the sparse rows, in the order :meth:`dense_inputs` returns them."""
        return encoding.DENSE_COLUMNS

    @property
    def dense_key(self) -> type:
        """Evaluators with equal keys compute the same :meth:`dense_inputs` (a batch shared by several nets computes
        them once per key): its own class unless a subclass reuses another's dense inputs."""
        return type(self)

    def __init__(self, net: ValueNet, batch_size: int = 65536, check: bool = True) -> None:
        if getattr(net, "is_class_nets", False):
            raise NetworkConfigError(
                "Evaluator takes one ValueNet and this net holds specialist nets (one per position class): evaluate "
                "it through bgbot.evaluation.specialists.evaluator_for"
            )
        if net.config.encoding_version != self.encoding_version:
            raise NetworkConfigError(
                f"net expects encoding {net.config.encoding_version!r}, this evaluator has {self.encoding_version!r}"
            )
        self.net = net
        self.batch_size = batch_size
        self._table: torch.Tensor | None = None
        self._table_key: tuple | None = None
        self._probe: np.ndarray | None = None
        self._dense_w: torch.Tensor | None = None
        self._dense_index: torch.Tensor | None = None
        self.check = check

    def _hidden_table(self) -> torch.Tensor:
        """``(encoding.N_SPARSE_ROWS, H)`` float32: each sparse row's share of the first layer's pre-activations.

        Each row of ``SPARSE_ROWS`` has at most a few non-zero inputs, so its product with ``W1`` is itself a small
        weighted embedding-bag over the columns of ``W1`` (about 5 * R * H multiply-adds: cheap enough to redo after
        every optimiser step in training)."""
        w1, b1 = self.net.hidden.weight, self.net.hidden.bias
        if self._probe is None or len(self._probe) != w1.numel() + b1.numel():
            self._probe = np.random.default_rng(0).random(w1.numel() + b1.numel(), dtype=np.float32)
        # The in-place version counters miss writes through ``.data``: a random projection of the weights catches them.
        # In numpy on views of the weights: between searches' large batches a torch call costs several times more.
        w_flat, b_flat = w1.detach().numpy().reshape(-1), b1.detach().numpy()
        probe = float(np.dot(w_flat, self._probe[: len(w_flat)]) + np.dot(b_flat, self._probe[len(w_flat) :]))
        key = (w1.data_ptr(), w1._version, b1.data_ptr(), b1._version, probe)
        if self._table is None or key != self._table_key:
            w = w1.detach().T.contiguous()  # (F, H)
            table = F.embedding_bag(_ROW_COLS, w, per_sample_weights=_ROW_VALS, mode="sum")  # (R, H)
            off = encoding._R_OFF
            table[off : off + 16] += b1.detach()  # every position has one my-off slot
            self._fold_rows(table, w1.detach())
            # the dense product would give NaN, this may not (numpy's test: torch's costs an order of magnitude more)
            if self.check and not np.isfinite(table.numpy()).all():
                raise EvaluationError(
                    "the network's first layer has NaN or infinite weights: its weights are damaged or training diverged"
                )
            self._table, self._table_key = table, key
            if self._dense_index is None:
                self._dense_index = torch.tensor(self.dense_columns, dtype=torch.int64)
            # (D, H), row-major for the product: the columns gathered by a kept index (a list costs a conversion)
            cols = self._dense_index
            self._dense_w = w1.detach().index_select(1, cols).T.contiguous() if len(cols) else None
        return self._table

    def _fold_rows(self, table: torch.Tensor, w1: torch.Tensor) -> None:
        """Add to the sparse rows' ``table`` ``(N_SPARSE_ROWS, H)`` the share of inputs outside ``SPARSE_ROWS`` that
        depend on one slot's value only (``w1`` the first layer's weights ``(H, n_inputs)``). None here; a subclass
        for a wider encoding may fold some of its inputs this way and leave them out of :attr:`dense_columns`."""

    def _forward(self, x: np.ndarray) -> np.ndarray:
        """Dense reference: ``(M, n_inputs)`` float32 -> ``(M, 5)`` float32, what :meth:`ValueNet.forward` computes."""
        with torch.inference_mode():
            return self.net(torch.from_numpy(x)).numpy()

    def _forward_sparse(self, slots: np.ndarray, table: torch.Tensor, dense: np.ndarray | None = None) -> np.ndarray:
        """``(M, N_SLOTS)`` int32 rows of the sparse encoding (and the ``(M, D)`` float32 inputs of
        ``encoding.DENSE_COLUMNS``, if any) -> ``(M, 5)`` float32 probabilities."""
        h = bag_sum(slots, table)  # (M, H) pre-activations, bias included
        if dense is not None:
            assert self._dense_w is not None  # built by _hidden_table with the table
            h.addmm_(torch.from_numpy(dense), self._dense_w)  # (D, H), refreshed with the table
        _IN_PLACE_ACTIVATIONS[self.net.config.activation](h)
        s = torch.addmm(self.net.out.bias, h, self.net.out.weight.T).sigmoid_()  # (M, 5) conditional probabilities
        return _cumulative(s.numpy())

    def evaluate(self, positions: np.ndarray) -> np.ndarray:
        """Probabilities ``(M, 5)`` float32 (win, wg, wbg, lg, lbg) for positions ``(M, 26)`` int8 (side on roll)."""
        slots, dense = self.inputs(positions)
        out = np.empty((len(slots), 5), dtype=np.float32)
        n = self.batch_size
        with torch.inference_mode(), np.errstate(invalid="ignore", over="ignore"):  # damaged weights: reported below
            table = self._hidden_table()
            for i in range(0, len(slots), n):
                chunk = None if dense is None else dense[i : i + n]
                out[i : i + n] = self._forward_sparse(slots[i : i + n], table, chunk)
        if self.check and not np.isfinite(out).all():
            raise EvaluationError(
                f"the network gave NaN or infinite probabilities for {int((~np.isfinite(out)).any(axis=1).sum())} "
                f"of {len(out)} positions: its weights are damaged or training diverged"
            )
        return out

    def dense_inputs(self, positions: np.ndarray) -> np.ndarray:
        """The inputs of :attr:`dense_columns`, ``(M, 26)`` int8 -> ``(M, len(dense_columns))`` float32."""
        return encoding.dense_inputs(positions)

    def inputs(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """Both parts of the inputs of positions ``(M, 26)`` int8: the sparse rows ``(M, encoding.N_SLOTS)`` int32
        (:func:`bgbot.evaluation.encoding.sparse_encode`) and :meth:`dense_inputs` (``None`` without dense columns).
        A subclass may compute them together."""
        slots = encoding.sparse_encode(positions)
        return slots, (self.dense_inputs(positions) if self.dense_columns else None)

    def equities(self, positions: np.ndarray) -> np.ndarray:
        """Cubeless money equity ``(M,)`` float32 of positions ``(M, 26)`` int8 for the side on roll."""
        return equity(self.evaluate(positions))
