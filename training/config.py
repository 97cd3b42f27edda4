"""Training configuration: a typed dataclass, read from TOML presets in ``training/configs/``."""

from __future__ import annotations

import math
import tomllib
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from bgbot.errors import BgbotError

CONFIG_DIR = Path(__file__).resolve().parent / "configs"


class ConfigError(BgbotError):
    """A training config file that is missing, malformed or has unknown or out-of-range fields."""


MAX_INT = 2**63 - 1
_KINDS = {"int": (int,), "float": (float, int), "str": (str,), "bool": (bool,)}
"""Field annotation -> accepted Python types (TOML integers are fine for float fields; booleans only for bool ones)."""
_LIMITS = {
    "games": (1, 10**10),
    "games_in_flight": (1, 1 << 20),
    "n_hidden": (1, 1 << 16),
    "lambda_horizon": (1, 1000),
    "seed": (0, 2**64 - 1),
    "threads": (0, 1024),
    "checkpoint_every": (1, 10**10),
    "eval_every": (0, 10**10),
    "eval_games": (2, 10**7),
}
"""Allowed ranges of the integer fields (inclusive)."""


@dataclass(frozen=True)
class TrainConfig:
    """Everything that defines a self-play training run. Each field can be set in a TOML preset."""

    games: int = 200_000
    """Games of self-play to train for (in total, counting the games played before a resume)."""
    games_in_flight: int = 512
    """Games advanced together; each ply is one batch of this many positions (and one optimiser step)."""
    n_hidden: int = 128
    """Hidden units of the value network."""
    activation: str = "sigmoid"
    """Hidden activation (``bgbot.evaluation.network.ACTIVATIONS``)."""
    lr: float = 1e-3
    """Adam learning rate at the start."""
    lr_final: float = 1e-4
    """Learning rate at the end; the rate decays geometrically from ``lr`` to ``lr_final`` over ``games``."""
    td_lambda: float = 0.0
    """TD(lambda) trace decay; lambda-returns are computed over a window of ``lambda_horizon`` plies."""
    lambda_horizon: int = 8
    """Plies of look-ahead for the truncated lambda-return (ignored when ``td_lambda`` is 0)."""
    seed: int = 1
    """Seed of the network initialisation and of all dice."""
    threads: int = 0
    """torch intra-op threads (0: the default of ``bgbot.evaluation.network.set_threads``, one: numpy's BLAS already uses
    every core for the large products)."""
    checkpoint_every: int = 10_000
    """Games between checkpoints (``latest.pt`` is rewritten each time; numbered copies are kept)."""
    eval_every: int = 20_000
    """Games between benchmarks against pubeval (0: never)."""
    eval_games: int = 2_000
    """Games per benchmark (played as duplicate pairs)."""
    specialists: bool = False
    """Train one net per position class (contact, crashed, race) on encoding v2
    (``bgbot.evaluation.specialists``) instead of one net on encoding v1."""
    init_from: str = ""
    """Checkpoint to start the specialists from ("" = random): a one-net v1 checkpoint gives each specialist its
    weights, new inputs at 0 (``specialists.from_single``); a specialists checkpoint is copied."""

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            kind = _KINDS[str(f.type)]
            if kind[0] is bool:
                if not isinstance(value, bool):
                    raise ConfigError(f"training config field {f.name} must be true or false, got {value!r}")
                continue
            if isinstance(value, bool) or not isinstance(value, kind):
                wanted = {int: "an integer", float: "a number", str: "a string"}[kind[0]]
                raise ConfigError(f"training config field {f.name} must be {wanted}, got {value!r}")
            if isinstance(value, float) and not math.isfinite(value):
                raise ConfigError(f"training config field {f.name} must be finite, got {value!r}")
            low, high = _LIMITS.get(f.name, (0, MAX_INT))
            if kind[0] is int and isinstance(value, int) and not low <= value <= high:
                raise ConfigError(f"training config field {f.name} must be in {low}..{high}, got {value!r}")
        from bgbot.evaluation.network import ACTIVATIONS

        if self.activation not in ACTIVATIONS:
            raise ConfigError(f"activation must be one of {sorted(ACTIVATIONS)}, got {self.activation!r}")
        if not 0.0 <= self.td_lambda < 1.0:
            raise ConfigError(f"td_lambda must be in [0, 1), got {self.td_lambda!r}")
        if not (0 < self.lr <= 1 and 0 < self.lr_final <= 1):
            raise ConfigError(f"learning rates must be in (0, 1], got {self.lr!r}, {self.lr_final!r}")
        if self.init_from and not self.specialists:
            raise ConfigError(
                f"init_from = {self.init_from!r} starts specialist nets: set specialists = true with it (a one-net run "
                "starts from random weights)"
            )

    def to_dict(self) -> dict:
        """The fields as a plain dict (stored in checkpoints)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> TrainConfig:
        """Build from a dict; unknown fields, wrong types (``games = "ten"``, ``games = true``, ``n_hidden = 16.5``)
        and values out of range raise :class:`ConfigError`."""
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - names)
        if unknown:
            raise ConfigError(f"unknown training config fields {unknown}; known: {sorted(names)}")
        return cls(**d)

    @classmethod
    def load(cls, path: str | Path) -> TrainConfig:
        """Read a TOML preset. ``path`` may also be a preset name such as ``tiny`` (``training/configs/tiny.toml``).

        Raises:
            ConfigError: the file is missing, is not valid TOML, or has unknown or bad fields.
        """
        p = Path(path)
        if not p.exists() and (CONFIG_DIR / f"{path}.toml").exists():
            p = CONFIG_DIR / f"{path}.toml"
        try:
            data = tomllib.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"training config {str(path)!r} not found") from None
        except (OSError, UnicodeDecodeError) as e:
            raise ConfigError(f"training config {str(path)!r} cannot be read: {e}") from None
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"training config {str(path)!r} is not valid TOML: {e}") from None
        return cls.from_dict(data)
