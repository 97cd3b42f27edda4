"""Tournaments: duplicate dice, statistics, worker independence, a dying worker, CLI, benchmark hook and gate."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import torch

from bgbot.arena import benchmark, tournament
from bgbot.arena import stats as arena_stats
from bgbot.arena.players import PubevalPlayer, RandomPlayer
from bgbot.cli import main
from bgbot.evaluation import checkpoint
from bgbot.evaluation.network import NetConfig, ValueNet
from bgbot.rules import dice


def _strip(results: dict) -> dict:
    return {k: v for k, v in results.items() if k not in ("elapsed_s", "games_per_s", "workers", "worker_restarts")}


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    torch.manual_seed(1)
    return str(
        checkpoint.save(
            tmp_path_factory.mktemp("m") / "tiny.pt",
            ValueNet(NetConfig(n_hidden=8)),
            games_trained=0,
            training_config={},
        )
    )


def test_pubeval_against_itself_every_pair_sums_to_zero():
    c = tournament.play_games(PubevalPlayer(), PubevalPlayer(), seed=5, pairing=0, start=0, stop=100)
    assert (c.points_a[0::2] + c.points_a[1::2] == 0).all()
    assert (c.points_a != 0).all() and set(np.abs(c.points_a)) <= {1, 2, 3}


def test_opening_dice_are_never_doubles_and_deterministic():
    d = dice.opening_dice(1, 2, np.arange(5000))
    assert (d[:, 0] != d[:, 1]).all() and d.min() == 1 and d.max() == 6
    np.testing.assert_array_equal(d, dice.opening_dice(1, 2, np.arange(5000)))
    counts = np.bincount(d[:, 0], minlength=7)[1:]
    assert counts.min() > 700  # each value about 833 times
    assert (dice.opening_dice(2, 2, np.arange(5000)) != d).any()


def test_pair_games_mirror_each_other():
    c = tournament.play_games(PubevalPlayer(), RandomPlayer(3), seed=9, pairing=0, start=0, stop=20, record=True)
    for g0, g1 in zip(c.games_mat[0::2], c.games_mat[1::2]):
        n = min(len(g0.turns), len(g1.turns))
        assert [t.dice for t in g0.turns[:n]] == [t.dice for t in g1.turns[:n]]
        assert [t.side for t in g0.turns[:n]] == [1 - t.side for t in g1.turns[:n]]
        assert g0.turns[0].dice[0] != g0.turns[0].dice[1]


def test_summarize_pair_statistics():
    s = arena_stats.summarize(np.array([1, -1, 2, 1, -1, -1, 3, -2]))
    pair_means = np.array([0, 1.5, -1, 0.5])
    assert s["ppg"] == pytest.approx(pair_means.mean()) and s["pairs"] == 4 and s["games"] == 8
    from scipy import stats

    half = stats.t.ppf(0.975, 3) * pair_means.std(ddof=1) / 2
    assert s["ci_low"] == pytest.approx(pair_means.mean() - half)
    assert s["stats_a"]["win_rate"] == pytest.approx(4 / 8) and s["stats_a"]["gammon_rate"] == pytest.approx(2 / 8)
    assert s["stats_a"]["backgammon_rate"] == pytest.approx(1 / 8)
    assert s["stats_b"]["gammon_rate"] == pytest.approx(1 / 8)


def test_same_seed_any_workers_same_results(tiny_model):
    players = [tiny_model, "pubeval", "random"]
    one = tournament.run(players, tournament.TournamentSettings(12, seed=3, workers=1, chunk_pairs=2))
    assert len(one["pairings"]) == 3 and one["pairings"][2]["ppg"] > 0  # pubeval beats random
    two = tournament.run(
        players, tournament.TournamentSettings(12, seed=3, workers=2, chunk_pairs=2)
    )  # a net batched differently per worker
    assert _strip(two) == _strip(one)


def test_a_dying_worker_is_replayed_and_changes_nothing(tmp_path, monkeypatch):
    # pubeval and random: the workers need no torch, so the two pools start in a fraction of a second.
    players = ["pubeval", "random"]
    one = tournament.run(players, tournament.TournamentSettings(12, seed=3, workers=1, chunk_pairs=2))
    # Two workers, one of which dies once: its chunk is replayed, nothing is lost, the results do not change.
    monkeypatch.setenv(tournament.CRASH_ENV, str(tmp_path / "crashed"))
    crashed = tournament.run(players, tournament.TournamentSettings(12, seed=3, workers=2, chunk_pairs=2))
    assert (tmp_path / "crashed").exists() and crashed["worker_restarts"] >= 1
    assert _strip(crashed) == _strip(one)


def test_bad_tournaments_raise():
    with pytest.raises(tournament.TournamentError, match="at least two"):
        tournament.run(["pubeval"], tournament.TournamentSettings(10))
    with pytest.raises(tournament.TournamentError, match="even"):
        tournament.run(["pubeval", "random"], tournament.TournamentSettings(7))
    with pytest.raises(ValueError, match="bogus"):
        tournament.run(["pubeval", "bogus"], tournament.TournamentSettings(10))


def test_cli_tournament_json_and_table(capsys, tmp_path):
    assert (
        main(
            [
                "tournament",
                "--player",
                "pubeval",
                "--player",
                "random",
                "--games",
                "10",
                "--seed",
                "1",
                "--workers",
                "1",
                "--json",
                "--out",
                str(tmp_path),
            ]
        )
        == 0
    )
    r = json.loads(capsys.readouterr().out)
    assert r["pairings"][0]["games"] == 10 and r["pairings"][0]["ppg"] > 0
    assert (tmp_path / "01_pubeval_vs_random.mat").read_text().count(" Game ") == 10
    assert main(["tournament", "--player", "pubeval", "--player", "random", "--games", "4", "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert "pubeval" in out and "Ranking" in out
    assert main(["tournament", "--player", "pubeval", "--player", "nope", "--games", "4"]) == 2


def test_resume_of_a_finished_tournament_prints_its_results(capsys, tmp_path):
    out = tmp_path / "t"
    argv = ["tournament", "--player", "pubeval", "--player", "random", "--games", "6", "--seed", "3", "--workers", "1"]
    assert main([*argv, "--json", "--out", str(out), "--quiet"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert json.loads((out / tournament.RESULTS_FILE).read_text()) == first
    assert not (out / tournament.CHUNKS_DIR).exists()
    assert main(["tournament", "--resume", str(out), "--json", "--quiet"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out) == first  # the recorded results, nothing played again
    assert captured.err.count("\n") == 1 and "holds a finished tournament" in captured.err
    assert "nothing to resume" in captured.err and str(out / tournament.RESULTS_FILE) in captured.err
    assert main(["tournament", "--resume", str(out), "--quiet"]) == 0  # the table, as the run printed it
    table = capsys.readouterr().out
    assert "pubeval" in table and "Ranking" in table and f"{first['pairings'][0]['ppg']:+.3f}" in table
    # a directory from before results.json: the .mat files alone say it is finished
    (out / tournament.RESULTS_FILE).unlink()
    assert main(["tournament", "--resume", str(out), "--quiet"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and "holds a finished tournament" in captured.err and ".mat files" in captured.err
    # a fresh run into the same directory: only with --force, which deletes the old tournament's files first
    assert main([*argv, "--games", "4", "--out", str(out), "--quiet", "--json", "--force"]) == 0
    assert json.loads((out / tournament.RESULTS_FILE).read_text())["games"] == 4
    capsys.readouterr()


def test_an_out_dir_with_another_tournaments_files_is_refused_unless_forced(capsys, tmp_path):
    out = tmp_path / "t"
    argv = ["tournament", "--player", "pubeval", "--player", "random", "--seed", "3", "--workers", "1", "--quiet"]
    assert main([*argv, "--games", "6", "--out", str(out), "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    mat = out / "01_pubeval_vs_random.mat"
    old_mat = mat.read_text()
    (out / "notes.txt").write_text("mine")  # a user's own files are never touched
    (out / "game.mat").write_text("mine too")
    (out / tournament.CHUNKS_DIR).mkdir()  # as an interrupted tournament leaves it
    assert [p.name for p in tournament.tournament_files(out)] == [mat.name, "chunks", tournament.RESULTS_FILE]
    assert main([*argv, "--games", "4", "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == (
        f"error: {out} holds another tournament's files (01_pubeval_vs_random.mat, chunks/, results.json): give "
        f"another --out, --resume {out} to finish that tournament, or --force to delete them (other files are "
        "kept)\n"
    )
    assert mat.read_text() == old_mat and json.loads((out / tournament.RESULTS_FILE).read_text()) == first
    assert main([*argv, "--games", "4", "--out", str(out), "--force", "--json"]) == 0
    second = json.loads(capsys.readouterr().out)
    assert second["games"] == 4 and json.loads((out / tournament.RESULTS_FILE).read_text()) == second
    assert mat.read_text() != old_mat and mat.read_text().count(" Game ") == 4
    assert sorted(p.name for p in out.iterdir()) == [
        "01_pubeval_vs_random.mat",
        "game.mat",
        "notes.txt",
        "results.json",
    ]
    assert (out / "notes.txt").read_text() == "mine" and (out / "game.mat").read_text() == "mine too"
    assert main([*argv, "--resume", str(out), "--force"]) == 2
    assert capsys.readouterr().err == f"error: {tournament.FORCE_WITH_RESUME}\n"
    plain = tmp_path / "a-file"  # a regular file as --out: refused before any game, even with --force
    plain.write_text("not a directory")
    for extra in ([], ["--force"]):
        assert main([*argv, "--games", "4", "--out", str(plain), *extra]) == 2
        assert (
            capsys.readouterr().err
            == f"error: --out {str(plain)!r} exists and is not a directory: give a directory for the .mat files\n"
        )
    assert plain.read_text() == "not a directory"


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"games": 3}, "games per pairing must be an even number >= 4"),
        ({"games": 4, "chunk_pairs": 0}, "chunk_pairs (duplicate pairs per work unit) must be an integer >= 1, got 0"),
        ({"games": 4, "chunk_pairs": 2.5}, "chunk_pairs (duplicate pairs per work unit) must be an integer >= 1"),
        ({"games": 4, "resume": True}, "resume finishes the tournament saved in an output directory"),
        ({"games": 4, "force": True}, "--force deletes an earlier tournament's files in the output directory"),
        ({"games": 4, "out_dir": "d", "force": True, "resume": True}, "cannot be used with --resume"),
        ({"games": 4, "workers": 0}, "workers must be an integer in 1 .. 1024, got 0"),
        ({"games": 4, "auto_doubles": 1}, "automatic doubles need the cube"),
    ],
)
def test_settings_are_checked_when_made(kwargs, message):
    with pytest.raises(tournament.TournamentError) as err:
        tournament.TournamentSettings(**kwargs)
    assert message in str(err.value)


def test_a_resume_of_settings_out_of_range_is_an_error_line(capsys, tmp_path):
    """A saved tournament whose settings file was edited to an impossible chunk size: one error line, no traceback."""
    out = tmp_path / "t"
    saved = {"players": ["pubeval", "random"], "games": 4, "seed": 0, "cube": False, "match_length": 0}
    saved |= {"jacoby": True, "auto_doubles": 0, "backgammon_value": 3, "chunk_pairs": 0}
    (out / tournament.CHUNKS_DIR).mkdir(parents=True)
    (out / tournament.CHUNKS_DIR / "tournament.json").write_text(json.dumps(saved))
    assert main(["tournament", "--resume", str(out), "--quiet", "--workers", "1"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and "Traceback" not in captured.err
    assert captured.err.startswith("error: chunk_pairs (duplicate pairs per work unit) must be an integer >= 1")


def test_benchmark_and_plot(tmp_path):
    b = benchmark.benchmark(PubevalPlayer(), opponent="random", games=20, seed=2)
    # Known values of these 10 duplicate pairs (seed 2): 51 points in 20 games, t-interval with 9 degrees of freedom.
    assert b["games"] == 20 and b["pairs"] == 10 and b["ppg"] == 2.55
    assert b["ci_low"] == pytest.approx(2.2368185, abs=1e-6) and b["ci_high"] == pytest.approx(2.8631815, abs=1e-6)
    path = benchmark.plot_progress([{**b, "games_trained": 1000}, {**b, "games_trained": 0}], tmp_path / "p.png")
    assert path.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(("games", "shown"), [("199", "199"), ("201", "201"), ("0", "0"), ("10000002", "10000002"),
                                             ("1.5", "'1.5'")])  # fmt: skip
def test_gate_games_out_of_range_are_one_error_in_one_wording(tiny_model, tmp_path, capsys, games, shown):
    """Too few, odd, too many or not a whole number: ``bgbot gate --games`` is refused before any game in one wording
    naming the flag, the rule and the value, with exit status 2."""
    argv = ["gate", tiny_model, "--against", str(tmp_path / "current.pt"), "--games", games, "--workers", "1"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == (
        f"error: argument --games: an even whole number 200 .. 10,000,000, got {shown} (see 'bgbot gate --help')"
    )


def test_gate_rejects_an_equal_model_and_records_it(tiny_model, tmp_path, capsys):
    import shutil

    models = tmp_path / "models"
    (models / "candidates").mkdir(parents=True)
    current = models / "current.pt"
    shutil.copy(tiny_model, current)
    candidate = models / "candidates" / "tiny.pt"
    shutil.copy(tiny_model, candidate)
    # Too few games: refused before playing (exit 2), nothing recorded.
    assert main(["gate", str(candidate), "--against", str(current), "--games", "198", "--workers", "1"]) == 2
    assert not (models / "README.md").exists()
    # Equal models with duplicate dice: every pair sums to 0, CI [0, 0], rejected: exit status 1.
    capsys.readouterr()
    assert main(["gate", str(candidate), "--against", str(current), "--games", "200", "--workers", "1"]) == 1
    assert capsys.readouterr().out.rstrip().endswith(f"rejected; recorded in {models / 'README.md'}")
    text = (models / "README.md").read_text()
    assert "## Gate decisions" in text and "rejected" in text and "200 games" in text
    assert "+0.000 ± 0.000 ppg (95% CI [+0.000, +0.000])" in text
    assert f"`{candidate}`" in text
    assert not (models / "tiny.pt").exists()


def test_gate_of_a_candidate_from_elsewhere_leaves_the_registry_alone(tiny_model, tmp_path, capsys):
    """A rejected candidate outside AGAINST's directory (a file in /tmp, a run directory) writes no registry line, and
    the verdict says so; the JSON decision's ``registry`` is None."""
    import shutil

    models = tmp_path / "models"
    models.mkdir()
    registry = "# Models\n\n## Gate decisions\n\n- earlier line\n"
    (models / "README.md").write_text(registry)
    current = models / "current.pt"
    shutil.copy(tiny_model, current)
    assert not str(tiny_model).startswith(str(models))
    argv = ["gate", tiny_model, "--against", str(current), "--games", "200", "--workers", "1"]
    assert main(argv) == 1
    assert (models / "README.md").read_text() == registry
    out = capsys.readouterr().out
    assert out.rstrip().endswith(f"rejected; registry not touched (the candidate is not in {models})"), out
    assert main([*argv, "--json"]) == 1
    d = json.loads(capsys.readouterr().out)
    assert d["accepted"] is False and d["registry"] is None and d["promoted_to"] is None and d["games"] == 200
    assert (models / "README.md").read_text() == registry
    assert sorted(p.name for p in models.iterdir()) == ["README.md", "current.pt"]


def test_gate_promotes_a_significant_winner(tiny_model, tmp_path, monkeypatch):
    models = tmp_path / "models"
    models.mkdir()
    (models / "README.md").write_text("# Models\n\n## Gate decisions\n\n- earlier line\n\n## Other\n\ntext\n")
    fake = {"pairings": [{"ppg": 0.3, "ci_low": 0.1, "ci_high": 0.5}]}
    monkeypatch.setattr(tournament, "run", lambda *a, **k: fake)
    # A candidate with its optimiser state, as training writes it.
    net = ValueNet(NetConfig(n_hidden=8))
    opt = torch.optim.Adam(net.parameters())
    net(torch.zeros(1, net.config.n_inputs)).sum().backward()
    opt.step()
    cand = checkpoint.save(tmp_path / "cand" / "tiny.pt", net, games_trained=5, training_config={}, optimizer=opt)
    d = benchmark.gate(cand, tiny_model, benchmark.GateSettings(200), models_dir=models)
    assert d["accepted"] and d["promoted_to"] == str(models / "tiny.pt")
    assert d["registry"] == str(models / "README.md")  # from elsewhere, but promoted: a model entering is recorded
    promoted, meta = checkpoint.load(models / "tiny.pt")
    assert meta.optimizer_state is None and meta.games_trained == 5  # stripped, metadata kept
    assert checkpoint.load(cand)[1].optimizer_state is not None  # the candidate keeps it
    for a, b in zip(promoted.state_dict().values(), net.state_dict().values()):
        assert torch.equal(a, b)
    assert (models / "tiny.pt").stat().st_size < cand.stat().st_size
    again = benchmark.gate(cand, tiny_model, benchmark.GateSettings(200), models_dir=models)
    assert again["accepted"]  # same weights there: no error
    text = (models / "README.md").read_text()
    assert text.index("ACCEPTED") < text.index("## Other")
    with pytest.raises(benchmark.GateError, match="at least 200"):
        benchmark.GateSettings(100)


def test_a_ppg_that_rounds_to_zero_prints_without_a_minus(capsys):
    """pubeval against itself with duplicate dice: every pair sums to 0, so each side's ppg is 0 (B's -0.0): the
    table prints +0.000 for both, never -0.000."""
    argv = ["tournament", "--player", "pubeval", "--player", "pubeval", "--games", "4", "--seed", "1", "--workers", "1"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "-0.000" not in out
    assert re.search(r"(?m)^ 2\. pubeval#2 +\+0\.000 ", out), out


def test_an_interval_over_too_few_games_is_marked_unreliable_and_not_printed(capsys):
    """Below MIN_INTERVAL_GAMES (30) games a pairing's ppg interval is marked ``interval_reliable: false`` with a note
    (in the JSON, and in the ranking rows resting on it), the table prints "too few games" instead of it, and the
    gate accepts no candidate on it; at 30 games it is printed as before."""
    assert arena_stats.MIN_INTERVAL_GAMES == 30
    few = arena_stats.summarize(np.array([3, -1, 3, -2]))  # 2 pairs: the t-interval reaches beyond +3 ppg
    assert few["ppg"] == 0.75 and few["ci_high"] > 3
    assert few["interval_reliable"] is False
    assert few["interval_note"] == "too few games for a 95% interval: 4 (at least 30)"
    assert not benchmark.accepts({**few, "ci_low": 0.1})  # a positive lower end over 4 games accepts nothing
    enough = arena_stats.summarize(np.array([2, -1] * 15))
    assert enough["interval_reliable"] is True and enough["interval_note"] is None
    assert benchmark.accepts(enough)
    (a, b) = arena_stats.ranking(["x", "y"], [(0, 1)], [few])
    assert (a["interval_reliable"], a["interval_note"]) == (False, few["interval_note"])
    assert (b["interval_reliable"], b["interval_note"]) == (False, few["interval_note"])

    argv = ["tournament", "--player", "pubeval", "--player", "random", "--games", "4", "--seed", "1", "--workers", "1"]
    assert main([*argv, "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["pairings"][0]["interval_reliable"] is False and r["ranking"][0]["interval_reliable"] is False
    assert r["pairings"][0]["interval_note"] == "too few games for a 95% interval: 4 (at least 30)"
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[3] == "pubeval  random    +2.250    too few games     100.0%   75.0%  50.0%    0.0%   0.0%"
    assert out[6:8] == [" 1. pubeval   +2.250    too few games", " 2. random    -2.250    too few games"]
    assert out[-1] == (
        "95% CI not shown: 4 games per pairing, fewer than the 30 a t-interval over duplicate pairs needs to be "
        "trusted (it may have zero width or pass the feasible range)"
    )
    argv[argv.index("4")] = "30"
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "too few games" not in out and "CI not shown" not in out
    assert re.search(r"(?m)^pubeval  random    [+-]\d\.\d{3}  \[ [+-]\d\.\d{3},  [+-]\d\.\d{3}\]", out), out


def test_gate_refuses_a_registry_that_is_not_a_file_before_any_game(tiny_model, tmp_path, monkeypatch, capsys):
    import shutil

    models = tmp_path / "models"
    (models / "README.md").mkdir(parents=True)  # the registry's path is a directory
    (models / "candidates").mkdir()
    candidate = models / "candidates" / "c.pt"
    shutil.copy(tiny_model, candidate)
    shutil.copy(tiny_model, models / "current.pt")
    played = []
    monkeypatch.setattr(tournament, "run", lambda *a, **k: played.append(1))
    assert main(["gate", str(candidate), "--against", str(models / "current.pt"), "--games", "200"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"error: the registry {str(models / 'README.md')!r} is not a file: the gate records its decisions there"
    )
    assert not played and sorted(p.name for p in models.iterdir()) == ["README.md", "candidates", "current.pt"]
