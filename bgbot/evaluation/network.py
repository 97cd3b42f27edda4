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

    The large matrix products of inference run in numpy, whose OpenBLAS uses every core by itself; torch only does
    elementwise work and the small training batches. Two thread pools that both spin on the same two cores slow each
    other down (measured: 16 ms instead of 7 ms for one 10,000-position forward pass), hence one torch thread by
    default. One inter-op thread: evaluation is a chain of small ops.
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
    "sigmoid": lambda h: torch.from_numpy(h).sigmoid_(),
    "tanh": lambda h: torch.from_numpy(h).tanh_(),
    "relu": lambda h: torch.from_numpy(h).relu_(),
}
"""Activations applied in place to a float32 numpy array (through a torch view of the same memory: torch's
elementwise kernels are much faster than numpy's ``exp`` here)."""


class Evaluator:
    """Inference over raw positions: ``evaluate((M, 26) int8) -> (M, 5) float32`` for the side on roll.

    With ``check`` (the default) an output that is not finite raises :class:`EvaluationError`.

    Encodes with ``bgbot.evaluation.encoding`` (checked against the net's ``encoding_version``) and computes what
    :meth:`ValueNet.forward` does, on the net's current weights (shared, not copied: an evaluator of a net that is
    being trained always sees its latest weights): the matrix products by numpy, whose OpenBLAS is about twice as fast
    as torch's MKL on these machines' AMD processors, the activations by torch in place; no autograd. Chunks of at
    most ``batch_size`` rows.
    Does not look at finished games: see the module docstring.
    """

    def __init__(self, net: ValueNet, batch_size: int = 65536, check: bool = True) -> None:
        if net.config.encoding_version != encoding.ENCODING_VERSION:
            raise NetworkConfigError(
                f"net expects encoding {net.config.encoding_version!r}, this code has {encoding.ENCODING_VERSION!r}"
            )
        self.net = net
        self.batch_size = batch_size
        self.check = check

    def _forward(self, x: np.ndarray) -> np.ndarray:
        """``(M, n_inputs)`` float32 -> ``(M, 5)`` float32, what :meth:`ValueNet.forward` computes."""
        w1, b1 = self.net.hidden.weight.detach().numpy(), self.net.hidden.bias.detach().numpy()
        w2, b2 = self.net.out.weight.detach().numpy(), self.net.out.bias.detach().numpy()
        h = x @ w1.T
        h += b1
        _IN_PLACE_ACTIVATIONS[self.net.config.activation](h)
        s = h @ w2.T
        s += b2
        _IN_PLACE_ACTIVATIONS["sigmoid"](s)  # (M, 5) conditional probabilities
        out = np.empty_like(s)
        out[:, 0] = s[:, 0]
        out[:, 1] = s[:, 0] * s[:, 1]
        out[:, 2] = out[:, 1] * s[:, 2]
        out[:, 3] = (1.0 - s[:, 0]) * s[:, 3]
        out[:, 4] = out[:, 3] * s[:, 4]
        return out

    def evaluate(self, positions: np.ndarray) -> np.ndarray:
        """Probabilities ``(M, 5)`` float32 (win, wg, wbg, lg, lbg) for positions ``(M, 26)`` int8 (side on roll)."""
        x = encoding.encode(positions)  # (M, F) float32
        out = np.empty((len(x), 5), dtype=np.float32)
        with np.errstate(invalid="ignore", over="ignore"):  # damaged weights: reported below, not as warnings
            for i in range(0, len(x), self.batch_size):
                out[i : i + self.batch_size] = self._forward(x[i : i + self.batch_size])
        if self.check and not np.isfinite(out).all():
            raise EvaluationError(
                f"the network gave NaN or infinite probabilities for {int((~np.isfinite(out)).any(axis=1).sum())} "
                f"of {len(out)} positions: its weights are damaged or training diverged"
            )
        return out

    def equities(self, positions: np.ndarray) -> np.ndarray:
        """Cubeless money equity ``(M,)`` float32 of positions ``(M, 26)`` int8 for the side on roll."""
        return equity(self.evaluate(positions))
