"""Self-play TD targets (the classic faults) and the training run: tiny preset, checkpoints, resume, errors."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import torch
from scipy import stats as scipy_stats

from bgbot.arena.benchmark import benchmark as arena_benchmark
from bgbot.evaluation import checkpoint
from bgbot.evaluation.network import Evaluator
from bgbot.rules.board import flip
from tests.positions import position
from training import cli
from training.config import ConfigError, TrainConfig
from training.selfplay import SelfPlay, lambda_returns, roll_dice
from training.train import RunError, RunState, train

P = np.array([0.3, 0.1, 0.05, 0.2, 0.02], dtype=np.float32)  # (w, wg, wbg, lg, lbg) for the side on roll


class ConstantEvaluator:
    """Says ``P`` for every position (the side on roll's view)."""

    def evaluate(self, positions):
        return np.repeat(P[None], len(positions), axis=0)


def one_step(pos: np.ndarray) -> np.ndarray:
    """TD(0) target of ``pos`` (side on roll) after one self-play ply with the constant evaluator."""
    sp = SelfPlay(1, np.random.default_rng(0))
    sp.positions = pos[None].copy()
    sp.opening[:] = False
    states, targets = sp.step(ConstantEvaluator())
    assert np.array_equal(states[0], pos)
    return targets[0]


def test_bootstrap_target_is_the_evaluation_flipped_to_the_mover():
    # The net sees the afterstate with the opponent on roll and says P; the mover's target is P from its side:
    # win 1 - 0.3, its gammons are the opponent's lost gammons (0.2, 0.02) and the reverse.
    target = one_step(position({13: 15}, {12: 15}))
    assert target == pytest.approx([0.7, 0.2, 0.02, 0.1, 0.05])


@pytest.mark.parametrize(
    "theirs, expected",
    [
        ({12: 14}, [1, 0, 0, 0, 0]),  # the opponent has one checker off: a single game
        ({12: 15}, [1, 1, 0, 0, 0]),  # none off, none in my home board: a gammon
        ({12: 14, 5: 1}, [1, 1, 1, 0, 0]),  # none off and one in my home board: a backgammon
        ({12: 14, 0: 1}, [1, 1, 1, 0, 0]),  # none off and one on the bar: a backgammon
    ],
)
def test_target_of_a_game_ending_play_is_the_actual_result(theirs, expected):
    mine = {1: 1}  # my last checker, on the 1-point: any roll bears it off
    target = one_step(position(mine, theirs))
    assert target.tolist() == expected


def test_finished_games_are_replaced_and_counted():
    sp = SelfPlay(2, np.random.default_rng(0))
    sp.positions = np.stack([position({1: 1}, {12: 15}), position({1: 1}, {12: 14})])
    sp.opening[:] = False
    sp.step(ConstantEvaluator())
    assert sp.games_finished == 2
    assert sp.results.tolist() == [1, 1, 0]
    assert sp.opening.tolist() == [True, True]
    assert np.array_equal(sp.positions[0], flip(sp.positions[0]))  # back to the (symmetric) starting position


def test_lambda_returns_by_hand():
    a = np.array([0.6, 0.2, 0.0, 0.1, 0.0], dtype=np.float32)
    b = np.array([0.5, 0.1, 0.0, 0.3, 0.1], dtype=np.float32)
    c = np.array([0.8, 0.4, 0.1, 0.0, 0.0], dtype=np.float32)
    values = np.stack([a, b, c])[:, None, :]  # (3 plies, 1 game, 5)
    done = np.zeros((3, 1), dtype=bool)
    lam = 0.5
    flip_p = lambda p: np.array([1 - p[0], p[3], p[4], p[1], p[2]])  # noqa: E731
    g2 = c
    g1 = (1 - lam) * b + lam * flip_p(g2)
    g0 = (1 - lam) * a + lam * flip_p(g1)
    assert lambda_returns(values, done, lam)[0] == pytest.approx(g0)
    done[0] = True  # the game ended at the first ply: its target is that ply's value alone
    assert lambda_returns(values, done, lam)[0] == pytest.approx(a)
    assert lambda_returns(values, np.zeros((3, 1), bool), 0.0)[0] == pytest.approx(a)


def test_opening_rolls_are_never_doubles():
    dice = roll_dice(np.random.default_rng(1), np.ones(5000, dtype=bool))
    assert (dice[:, 0] != dice[:, 1]).all()
    assert set(map(tuple, dice.tolist())) == {(a, b) for a in range(1, 7) for b in range(1, 7) if a != b}


def test_tiny_preset_trains_checkpoints_resumes_and_evaluates(tmp_path, capsys):
    config = TrainConfig.load("tiny")
    run = tmp_path / "run"
    assert cli.main(["--config", "tiny", "--run-dir", str(run), "--quiet"]) == 0
    state = json.loads(capsys.readouterr().out)
    assert state["games_trained"] == config.games  # exact: not 201 of 200
    bench = json.loads((run / "eval.jsonl").read_text().splitlines()[-1])  # a real benchmark against pubeval
    assert bench["games"] == config.eval_games and bench["opponent"] == "pubeval"
    # The record is the benchmark of the final net (replayed: same dice), its interval Student's t over 50 pairs.
    final_net, _ = checkpoint.load(run / "latest.pt")
    again = arena_benchmark(Evaluator(final_net), "pubeval", games=config.eval_games, seed=config.seed)
    assert bench["games_trained"] == state["games_trained"]
    assert {k: bench[k] for k in ("ppg", "ci_low", "ci_high")} == {k: again[k] for k in ("ppg", "ci_low", "ci_high")}
    half = scipy_stats.t.ppf(0.975, config.eval_games // 2 - 1) * bench["stderr"]
    assert bench["ci_low"] == pytest.approx(bench["ppg"] - half) and bench["ci_high"] == pytest.approx(
        bench["ppg"] + half
    )
    assert (run / "progress.png").stat().st_size > 1000
    state = RunState(**state)
    net, meta = checkpoint.load(run / "latest.pt")
    assert meta.games_trained == state.games_trained
    assert meta.training_config == config.to_dict()
    assert net.config.n_hidden == config.n_hidden
    assert meta.optimizer_state is not None
    saved = sorted(int(p.stem.split("-")[1]) for p in (run / "checkpoints").iterdir())
    assert len(saved) == 2 and 100 <= saved[0] < 100 + config.games_in_flight and saved[1] == config.games
    logged = [json.loads(line)["games"] for line in (run / "log.jsonl").read_text().splitlines()]
    assert logged == saved  # the final checkpoint written (and logged) once
    assert [json.loads(line)["games_trained"] for line in (run / "eval.jsonl").read_text().splitlines()] == [200]

    # --resume of a finished run is a no-op: nothing appended, nothing rewritten
    before = {name: (run / name).read_bytes() for name in ("latest.pt", "log.jsonl", "eval.jsonl")}
    assert cli.main(["--config", "tiny", "--run-dir", str(run), "--quiet", "--resume"]) == 0
    assert json.loads(capsys.readouterr().out)["games_trained"] == config.games
    assert {name: (run / name).read_bytes() for name in before} == before

    with pytest.raises(RunError, match="--resume"):
        train(config, run, progress=False)
    assert cli.main(["--config", "tiny", "--run-dir", str(run), "--quiet"]) == 2  # the same, as an error line
    assert capsys.readouterr().err.startswith("error: ")

    more = dataclasses.replace(config, games=config.games + 100)
    calls = []

    def evaluate(net, games):
        calls.append(games)
        return {"ppg": -1.0, "ci_low": -1.2, "ci_high": -0.8}

    resumed = train(more, run, resume=True, evaluate=evaluate, progress=False)
    assert resumed.games_trained == more.games
    assert checkpoint.load(run / "latest.pt")[1].games_trained == resumed.games_trained
    assert calls and calls[-1] == resumed.games_trained
    assert json.loads((run / "eval.jsonl").read_text().splitlines()[-1])["games_trained"] == resumed.games_trained


def test_resume_with_a_corrupt_checkpoint_is_a_clear_error(tmp_path):
    (tmp_path / "latest.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(checkpoint.CheckpointError):
        train(TrainConfig.load("tiny"), tmp_path, resume=True, progress=False)


def test_config_errors(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        TrainConfig.load(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("games = 10\nlearning_rate = 3\n")
    with pytest.raises(ConfigError, match="unknown"):
        TrainConfig.load(bad)
    bad.write_text("td_lambda = 1.5\n")
    with pytest.raises(ConfigError, match="td_lambda"):
        TrainConfig.load(bad)


@pytest.mark.parametrize(
    "text, field",
    [
        ('games = "ten"', "games"),
        ('lr = "fast"', "lr"),
        ("n_hidden = 16.5", "n_hidden"),
        ("games = true", "games"),
        ("games = 0", "games"),
        ("lr = nan", "lr"),
        ("seed = -1", "seed"),
        ('activation = "softmax"', "activation"),
    ],
)
def test_config_types_and_ranges_are_clean_errors(tmp_path, capsys, text, field):
    bad = tmp_path / "bad.toml"
    bad.write_text(text + "\n")
    with pytest.raises(ConfigError, match=field):
        TrainConfig.load(bad)
    assert cli.main(["--config", str(bad), "--run-dir", str(tmp_path / "run"), "--quiet", "--no-eval"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and field in err


def test_games_zero_on_the_command_line_is_refused(tmp_path, capsys):
    assert cli.main(["--config", "tiny", "--run-dir", str(tmp_path / "r"), "--games", "0", "--quiet"]) == 2
    assert "games" in capsys.readouterr().err
    assert not (tmp_path / "r" / "latest.pt").exists()


def test_a_directory_with_another_runs_logs_is_refused_unless_forced(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    (run / "log.jsonl").write_text('{"games": 5, "loss": 0.1}\n')
    args = ["--config", "tiny", "--run-dir", str(run), "--quiet", "--no-eval", "--games", "64"]
    assert cli.main(args) == 2
    assert "log.jsonl" in capsys.readouterr().err and "--force" in capsys.readouterr().err + "--force"
    assert (run / "log.jsonl").read_text() == '{"games": 5, "loss": 0.1}\n'  # untouched
    assert cli.main([*args, "--force"]) == 0
    logged = [json.loads(line)["games"] for line in (run / "log.jsonl").read_text().splitlines()]
    assert logged == [64]  # the new run's log only


def test_full_disk_is_a_clean_error_and_latest_stays_intact(tmp_path, capsys):
    import subprocess

    run = tmp_path / "small"
    run.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(run)], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        code = cli.main(["--config", "tiny", "--run-dir", str(run), "--quiet", "--no-eval", "--games", "2000"])
        err = capsys.readouterr().err
        assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, err
        assert "No space left on device" in err and "latest.pt" in err
        if "is intact" in err:  # the first checkpoint fitted: it must still load, at the games it says
            held = int(err.split("holds ")[1].split(" games")[0])
            assert checkpoint.load(run / "latest.pt")[1].games_trained == held
        assert not [p for p in run.iterdir() if p.name.endswith(".tmp")]  # no temporary file left behind
    finally:
        subprocess.run(["umount", str(run)], check=False)


def test_td_from_a_specialists_checkpoint_trains_it_and_refuses_a_mismatched_resume(tmp_path):
    """``bgbot train`` (the td stage) continues specialist nets (a format-2 checkpoint, as the default model may be)
    with ``specialists = true`` and ``init_from``; the wrong kind of run is refused with a clear error."""
    from bgbot.evaluation import specialists

    torch.manual_seed(0)
    init = checkpoint.save(tmp_path / "init.pt", specialists.fresh(n_hidden=4), games_trained=0, training_config={})
    base = dataclasses.replace(TrainConfig.load("tiny"), games=24, games_in_flight=8, checkpoint_every=24, eval_every=0)
    config = dataclasses.replace(base, n_hidden=4, specialists=True, init_from=str(init))
    state = train(config, tmp_path / "run", progress=False)
    nets, meta = checkpoint.load(tmp_path / "run" / "latest.pt")
    assert state.games_trained == meta.games_trained == 24 and meta.format_version == 2
    assert isinstance(nets, specialists.ClassNets) and nets.config.encoding_version == specialists.ENCODING_V2
    start, _ = checkpoint.load(init)
    assert not torch.equal(nets.net("contact").out.bias, start.net("contact").out.bias)  # type: ignore[union-attr]
    one_net = dataclasses.replace(config, specialists=False, init_from="", games=48)
    with pytest.raises(RunError, match="holds specialist nets and the config trains one net"):
        train(one_net, tmp_path / "run", resume=True, progress=False)
    with pytest.raises(ConfigError, match="init_from .* set specialists = true"):
        dataclasses.replace(base, init_from=str(init))


def _loss_before(net, positions: np.ndarray, targets: np.ndarray) -> torch.Tensor:
    """The TD loss as it was computed before the training loop was made faster (kept here as the reference): each
    class's rows encoded apart, in their net's encoding, and the squared errors summed over the classes."""
    from bgbot.evaluation import encoding, specialists

    if not isinstance(net, specialists.ClassNets):
        out = net(torch.from_numpy(encoding.encode(positions)))
        return torch.nn.functional.mse_loss(out, torch.from_numpy(targets))
    cls = specialists.classify(positions)
    cls[cls == specialists.OVER] = specialists.RACE
    total = torch.zeros(())
    for code, name in enumerate(specialists.CLASSES, start=1):
        rows = np.flatnonzero(cls == code)
        if len(rows) == 0:
            continue
        sub = net.net(name)
        x = torch.from_numpy(specialists.ENCODERS[sub.config.encoding_version][0](positions[rows]))
        total = total + ((sub(x) - torch.from_numpy(targets[rows])) ** 2).sum()
    return total / (5 * max(len(positions), 1))


@pytest.mark.parametrize("model", ["bgbot-2.pt", "bgbot-1.pt"])
def test_the_fast_td_step_learns_what_the_plain_one_did(model):
    """Self-play with learning as ``train`` runs it (inputs encoded ahead by SelfPlay, the loss on them, fused Adam)
    updates the weights as the plain loop did (each class encoded apart, per-tensor Adam) on the same plies, within
    float32 rounding: the shipped specialists (three nets on encoding v2) and a single net on v1."""
    import copy
    from pathlib import Path

    from bgbot.evaluation.specialists import evaluator_for
    from training.train import adam, encoder_for, td_loss

    net, _ = checkpoint.load(str(Path(__file__).resolve().parents[1] / "models" / model))
    ref = copy.deepcopy(net)
    opt, ref_opt = adam(net.parameters(), 3e-3), torch.optim.Adam(ref.parameters(), lr=3e-3)
    encode = encoder_for(net)
    sp = SelfPlay(96, np.random.default_rng(5), td_lambda=0.7, horizon=4, encode=encode)
    evaluator = evaluator_for(net)
    start = [p.detach().clone() for p in net.parameters()]
    steps = 0
    for _ in range(14):
        positions, targets = sp.step(evaluator)
        if not len(positions):
            assert sp.inputs == {}
            continue
        expected = encode(positions)  # what each batch encoded alone gives, exactly
        assert sp.inputs.keys() == expected.keys()
        for version, x in expected.items():
            assert np.array_equal(sp.inputs[version], x)
        loss, ref_loss = td_loss(net, positions, targets, sp.inputs), _loss_before(ref, positions, targets)
        assert loss.item() == pytest.approx(ref_loss.item(), rel=1e-6, abs=1e-9)
        for o, lo in ((opt, loss), (ref_opt, ref_loss)):
            o.zero_grad(set_to_none=True)
            lo.backward()
            o.step()
        steps += 1
    assert steps == 14 - 3
    moved = max(float((p.detach() - s).abs().max()) for p, s in zip(net.parameters(), start, strict=True))
    assert moved > 1e-2  # the steps did change the weights (11 Adam steps of up to 3e-3 each)
    for (name, p), q in zip(net.named_parameters(), ref.parameters(), strict=True):
        assert torch.allclose(p, q, rtol=0, atol=1e-6), name


def test_td_update_steps_on_a_finite_loss_and_leaves_the_weights_on_a_nan():
    """``td_update``: the loss it returns is ``td_loss``'s, and one Adam step follows it; a NaN loss (diverged targets)
    is returned with the weights untouched, for ``train`` to report as divergence."""
    from pathlib import Path

    from bgbot.rules.board import starting_position
    from training.train import adam, td_loss, td_update

    net, _ = checkpoint.load(str(Path(__file__).resolve().parents[1] / "models" / "bgbot-1.pt"))
    opt = adam(net.parameters(), 1e-3)
    start = starting_position()
    positions = np.stack([start, flip(position({6: 5, 8: 3, 13: 5, 24: 2}, {1: 2, 12: 5, 17: 3, 19: 4, 20: 1}))])
    targets = np.full((2, 5), 0.25, dtype=np.float32)
    before = [p.detach().clone() for p in net.parameters()]
    expected = td_loss(net, positions, targets).item()
    assert td_update(net, opt, positions, targets) == pytest.approx(expected, rel=1e-6)
    assert any(not torch.equal(p, b) for p, b in zip(net.parameters(), before, strict=True))
    after = [p.detach().clone() for p in net.parameters()]
    targets[0, 0] = np.nan
    assert np.isnan(td_update(net, opt, positions, targets))
    assert all(torch.equal(p, a) for p, a in zip(net.parameters(), after, strict=True))


def test_train_plays_through_a_move_filter(tmp_path):
    """``train(..., move_filter=...)``: self-play's checker play asks the filter for its candidates at every ply."""
    from bgbot.evaluation import prune

    calls = []

    class Counting(prune.MoveFilter):
        def candidates(self, positions, plays):
            calls.append(len(positions))
            return super().candidates(positions, plays)

    torch.manual_seed(0)
    config = dataclasses.replace(
        TrainConfig.load("tiny"), games=16, games_in_flight=8, checkpoint_every=16, eval_every=0
    )
    state = train(config, tmp_path / "run", progress=False, move_filter=Counting(prune.PruneNet(4), keep=1, extra=0))
    assert state.games_trained == 16 and len(calls) > 16 and set(calls) == {8}
