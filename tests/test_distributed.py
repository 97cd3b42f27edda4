"""Ray (the optional extra, installed in CI): one local Ray instance with 2 CPUs for the whole test session."""

from __future__ import annotations

import json
import os
import time

import numpy as np
import pytest
import ray  # the ray extra is part of the test install (pip install 'bgbot[ray]'): these tests never skip

from bgbot.arena import distributed, tournament
from bgbot.arena import rollout as ro
from bgbot.cli import main
from bgbot.rules.board import starting_position

pytestmark = pytest.mark.xdist_group("ray")  # one test process holds the session's Ray instance


@pytest.fixture(scope="session")
def ray_local(tmp_path_factory):
    """One local Ray (2 CPUs) per test session; its workers see the crash hook's directory (armed only by the test
    that kills a worker)."""
    crash_dir = tmp_path_factory.mktemp("ray-crash")
    if not ray.is_initialized():
        ray.init(
            num_cpus=2,
            include_dashboard=False,
            logging_level="ERROR",
            log_to_driver=False,
            runtime_env={"env_vars": {distributed.CRASH_ENV: str(crash_dir)}},
        )
    yield crash_dir
    ray.shutdown()


@pytest.fixture(scope="module")
def ev():
    from bgbot.evaluation.checkpoint import load
    from bgbot.evaluation.specialists import evaluator_for

    net, _ = load(ro.__file__.rsplit("/arena/", 1)[0] + "/data/default_model.pt")
    return evaluator_for(net)


def _strip(results: dict) -> dict:
    return {
        k: v for k, v in results.items() if k not in ("elapsed_s", "games_per_s", "workers", "worker_restarts", "ray")
    }


def test_tournament_on_ray_equals_the_local_run(ray_local):
    players = ["pubeval", "random"]
    local = tournament.run(players, tournament.TournamentSettings(8, seed=3, workers=1, chunk_pairs=2))
    on_ray = tournament.run(players, tournament.TournamentSettings(8, seed=3, ray="local", chunk_pairs=2))
    assert _strip(on_ray) == _strip(local) and on_ray["ray"] == "local"


def test_tournament_on_ray_counts_a_dead_worker_as_the_pool_does(ray_local):
    """A chunk whose Ray worker dies is run again and counted in ``worker_restarts`` (the pool's count), once."""
    players = ["pubeval", "random"]
    local = tournament.run(players, tournament.TournamentSettings(8, seed=5, workers=1, chunk_pairs=2))
    (ray_local / "armed").touch()  # the first Ray worker to start a chunk dies
    on_ray = tournament.run(players, tournament.TournamentSettings(8, seed=5, ray="local", chunk_pairs=2))
    assert (ray_local / "fired").exists() and not (ray_local / "armed").exists()
    (ray_local / "fired").unlink()
    assert on_ray["worker_restarts"] == 1 and local["worker_restarts"] == 0
    assert _strip(on_ray) == _strip(local)


def test_a_unit_whose_ray_worker_always_dies_is_an_error(ray_local):
    restarts: list[None] = []
    with pytest.raises(distributed.DistributedError, match="failed 3 times .its Ray worker died each time"):
        distributed.run_tasks(os._exit, [3], ray="local", on_restart=lambda: restarts.append(None))
    assert len(restarts) == distributed.MAX_ATTEMPTS


def test_rollout_on_ray_equals_the_local_run_even_when_a_worker_dies(ray_local, ev):
    pos = np.array([starting_position()])
    s = ro.RolloutSettings(trials=216, truncate=2, seed=4)
    local = ro._run(ev, pos, np.ones(1, bool), s, workers=1)
    assert np.array_equal(ro._run(ev, pos, np.ones(1, bool), s, ray="local"), local)
    (ray_local / "armed").touch()  # the first Ray worker to start a chunk dies; Ray runs the chunk again
    seen = []
    again = ro._run(ev, pos, np.ones(1, bool), s, ray="local", progress=seen.append)
    assert (ray_local / "fired").exists() and not (ray_local / "armed").exists()
    assert np.array_equal(again, local) and len(seen) == len(ro.chunk_tasks(s, 1))


def test_unreachable_ray_address_is_a_clear_error_quickly(ray_local):
    t0 = time.perf_counter()
    with pytest.raises(distributed.DistributedError, match="cannot reach the Ray cluster at '127.0.0.1:1'"):
        distributed.connect_ray("127.0.0.1:1")
    assert time.perf_counter() - t0 < 30


def test_cli_rollout_ray_local_json_equals_two_workers(ray_local, capsys):
    argv = ["rollout", "4HPwATDgc/ABMA", "42", "--candidates", "2", "--trials", "144", "--truncate", "2", "--json"]
    assert main([*argv, "--ray", "local"]) == 0
    on_ray = json.loads(capsys.readouterr().out)
    assert main([*argv, "--workers", "2"]) == 0
    pool = json.loads(capsys.readouterr().out)
    assert on_ray["workers"] == "ray" and pool["workers"] == 2
    strip = ("elapsed_s", "trials_per_s", "workers")
    assert {k: v for k, v in on_ray.items() if k not in strip} == {k: v for k, v in pool.items() if k not in strip}
    assert len(on_ray["plays"]) == 2


def test_selfplay_actors_pick_up_new_weight_versions(ray_local):
    import torch

    from bgbot.evaluation.network import NetConfig, ValueNet
    from training import distributed as td

    net = ValueNet(NetConfig())
    store = td.WeightStore()
    actor = td.SelfPlayActor(store, net.config.to_dict(), games=4, seed=1)
    assert ray.get(store.publish.remote(td.weights_of(net))) == 1
    pos, tgt, ver = ray.get(actor.play.remote(2))
    assert len(pos) == 8 and tgt.shape == (8, 5) and set(ver.tolist()) == {1}
    with torch.no_grad():
        net.out.bias += 1.0
    assert ray.get(store.publish.remote(td.weights_of(net))) == 2
    _, tgt2, ver2 = ray.get(actor.play.remote(1))
    assert set(ver2.tolist()) == {2}
    # The learner loop: every update publishes a new version, and the actors play with them.
    seen: list[int] = []

    def update(positions, targets, versions):
        seen.extend(versions.tolist())
        with torch.no_grad():
            net.out.bias -= 0.1

    published = td.run_learner(net, update, [actor], store, rounds=3, plies=1)
    assert published == [3, 4, 5, 6] and max(seen) > 3


def test_rollout_targets_stage_on_ray_equals_the_local_run(ray_local, tmp_path):
    from tests.positions import make_positions
    from training import cli as training_cli
    from training.parts import load_npz, save_npz

    save_npz(tmp_path / "pos" / "part-0000.npz", positions=make_positions(200, seed=5)[::50])
    model = ro.__file__.rsplit("/arena/", 1)[0] + "/data/default_model.pt"
    base = ["targets", "--model", model, "--positions", str(tmp_path / "pos"), "--kind", "rollout", "--quiet"]
    base += ["--trials", "4", "--horizon", "2"]
    assert training_cli.main([*base, "--out", str(tmp_path / "local")]) == 0
    assert training_cli.main([*base, "--out", str(tmp_path / "ray"), "--ray", "local"]) == 0
    local = load_npz(tmp_path / "local" / "part-0000.npz")
    on_ray = load_npz(tmp_path / "ray" / "part-0000.npz")
    assert np.array_equal(local["targets"], on_ray["targets"]) and local["targets"].shape == (4, 5)


def test_selfplay_actor_rebuilds_specialist_nets():
    """An actor's net comes from :func:`training.distributed.net_config_of`: one net or specialist nets alike."""
    import torch

    from bgbot.evaluation import specialists
    from training import distributed as td

    nets = specialists.fresh(n_hidden=4)
    actor = td._SelfPlayActor(None, td.net_config_of(nets), games=2, seed=1)  # the plain class: no Ray needed
    assert isinstance(actor.net, specialists.ClassNets) and isinstance(actor.evaluator, specialists.ClassEvaluator)
    assert actor.net.configs() == nets.configs()
    actor.net.load_state_dict({k: torch.from_numpy(v) for k, v in td.weights_of(nets).items()})  # as _sync does
    pos, tgt = actor.selfplay.step(actor.evaluator)
    assert pos.shape == (2, 26) and tgt.shape == (2, 5)
