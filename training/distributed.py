"""TD self-play across machines on Ray: self-play actors, a learner, and versioned weight broadcast.

The learner owns the network and the optimiser. After each update it publishes the weights to a
:class:`WeightStore` actor under a new version number (1, 2, ...). Each :class:`SelfPlayActor` keeps ``G`` games in
flight (:class:`bgbot_training.selfplay.SelfPlay`, the one game engine) and, before every batch of plies, fetches the
weights when the store holds a newer version than its own; every training pair it returns carries the version of
the weights that played that ply, so the learner can see (and, if it wishes, drop) stale data.

**Not bit-reproducible.** This path is asynchronous: which version an actor plays with depends on timing (when its
fetch lands relative to the learner's publishes), so two runs with the same seeds differ. The synchronous trainer
(:mod:`bgbot_training.train`) stays the reproducible one; use this one when one machine is not enough.

Needs the optional extra ``bgbot[ray]``; :func:`bgbot.arena.distributed.connect_ray` joins the cluster.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["WeightStore", "SelfPlayActor", "make_actors", "run_learner", "net_config_of", "build_net"]


def net_config_of(net) -> dict:
    """What an actor needs to rebuild ``net``'s shape (JSON-able): a :class:`bgbot.evaluation.network.ValueNet`'s
    config dict, or ``{"classes": {name: config dict}}`` for :class:`bgbot.evaluation.specialists.ClassNets`."""
    from bgbot.evaluation.specialists import ClassNets

    if isinstance(net, ClassNets):
        return {"classes": {name: cfg.to_dict() for name, cfg in net.configs().items()}}
    return net.config.to_dict()


def build_net(net_config: dict):
    """A net of the shape :func:`net_config_of` describes (fresh weights: the store's come later).

    Raises:
        bgbot.evaluation.network.NetworkConfigError, bgbot.evaluation.specialists.ClassNetsError: a bad description.
    """
    from bgbot.evaluation.network import NetConfig, ValueNet
    from bgbot.evaluation.specialists import ClassNets

    if "classes" in net_config:
        return ClassNets({name: NetConfig.from_dict(cfg) for name, cfg in net_config["classes"].items()})
    return ValueNet(NetConfig.from_dict(net_config))


def _ray():
    import ray

    return ray


class _WeightStore:
    """The latest weights and their version (0 = none yet)."""

    def __init__(self) -> None:
        self.version = 0
        self.weights: dict | None = None

    def publish(self, weights: dict) -> int:
        """Store ``weights`` (a state dict of numpy arrays) as the next version; returns it."""
        self.version += 1
        self.weights = weights
        return self.version

    def latest(self, have: int = 0) -> tuple[int, dict | None]:
        """``(version, weights)``; ``weights`` is None when ``have`` is already the latest version."""
        return self.version, (self.weights if self.version > have else None)


class _SelfPlayActor:
    """``games`` self-play games in flight on the weights of the store's latest version."""

    def __init__(self, store, net_config: dict, games: int, seed: int, td_lambda: float = 0.0, horizon: int = 1):
        import torch

        from bgbot.evaluation.specialists import evaluator_for

        from .selfplay import SelfPlay

        torch.set_num_threads(1)
        self.store = store
        self.net = build_net(net_config)
        self.evaluator = evaluator_for(self.net)
        self.selfplay = SelfPlay(games, np.random.default_rng(seed), td_lambda, horizon)
        self.version = 0

    def _sync(self) -> None:
        import torch

        version, weights = _ray().get(self.store.latest.remote(self.version))
        if weights is not None:
            self.net.load_state_dict({k: torch.from_numpy(np.asarray(v)) for k, v in weights.items()})
            self.version = version

    def play(self, plies: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Fetch newer weights, play ``plies`` plies -> ``(positions (K, 26) int8, targets (K, 5) float32,
        versions (K,) int64)``, the version of the weights that played each pair."""
        self._sync()
        pos, tgt, ver = [], [], []
        for _ in range(plies):
            p, t = self.selfplay.step(self.evaluator)
            pos.append(p)
            tgt.append(t)
            ver.append(np.full(len(p), self.version, dtype=np.int64))
        return np.concatenate(pos), np.concatenate(tgt), np.concatenate(ver)


def WeightStore():
    """A new weight store actor (Ray must be initialised)."""
    return _ray().remote(num_cpus=0)(_WeightStore).remote()


def SelfPlayActor(store, net_config: dict, games: int, seed: int, td_lambda: float = 0.0, horizon: int = 1):
    """A new self-play actor (one CPU) reading weights from ``store``; ``net_config`` from :func:`net_config_of` (one
    net or specialist nets)."""
    return _ray().remote(num_cpus=1)(_SelfPlayActor).remote(store, net_config, games, seed, td_lambda, horizon)


def weights_of(net) -> dict:
    """A net's state dict as numpy arrays (what the store holds)."""
    return {k: v.detach().cpu().numpy().copy() for k, v in net.state_dict().items()}


def make_actors(store, net_config: dict, n: int, games: int, seed: int, td_lambda: float = 0.0, horizon: int = 1):
    """``n`` actors, actor ``i`` seeded ``seed + i``."""
    return [SelfPlayActor(store, net_config, games, seed + i, td_lambda, horizon) for i in range(n)]


def run_learner(
    net,
    update: Callable[[np.ndarray, np.ndarray, np.ndarray], None],
    actors: list,
    store,
    rounds: int,
    plies: int = 8,
) -> list[int]:
    """The learner loop: publish the weights, then ``rounds`` times take the next actor batch to arrive, apply
    ``update(positions, targets, versions)`` (the caller's optimiser step on ``net``) and publish the new weights.
    Each actor is given a new batch as soon as it returns one. Returns the versions published."""
    ray = _ray()
    published = [ray.get(store.publish.remote(weights_of(net)))]
    pending = {a.play.remote(plies): a for a in actors}
    for _ in range(rounds):
        done, _ = ray.wait(list(pending), num_returns=1)
        actor = pending.pop(done[0])
        positions, targets, versions = ray.get(done[0])
        update(positions, targets, versions)
        published.append(ray.get(store.publish.remote(weights_of(net))))
        pending[actor.play.remote(plies)] = actor
    ray.get(list(pending))
    return published
