"""Tests for bgbot.cube.met: the embedded Kazaross-XG2 table and lookups."""

import json
from pathlib import Path

import pytest

from bgbot.cube.met import MatchEquityTable, METError, kazaross_xg2


def test_embedded_table_is_the_shared_one():
    met = kazaross_xg2()
    shared = Path(__file__).resolve().parents[1] / "bgbot" / "data" / "met_kazaross_xg2.json"
    data = json.loads(shared.read_text())
    assert met.max_length == 25 and "Kazaross" in met.name and "GNU Backgammon" in met.source
    assert met.pre_crawford[2][4] == data["pre_crawford"]["table"][2][4]


def test_lookups():
    met = kazaross_xg2()
    assert met.mwc(1, 1) == 0.5 and met.mwc(0, 3) == 1.0 and met.mwc(3, 0) == 0.0
    assert met.mwc(1, 2) == pytest.approx(0.67736)  # Crawford game, 1-away 2-away
    assert met.mwc(2, 1, post_crawford=True) == pytest.approx(0.48803)  # free drop
    assert met.mwc(1, 2, post_crawford=True) == pytest.approx(1 - 0.48803)
    for a in range(1, 10):
        for b in range(1, 10):
            assert met.mwc(a, b) + met.mwc(b, a) == pytest.approx(1.0, abs=1e-5)


def test_errors(tmp_path):
    with pytest.raises(METError, match="26"):
        kazaross_xg2().mwc(26, 3)
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(METError, match="bad.json"):
        MatchEquityTable.from_json(bad)
    with pytest.raises(METError):
        MatchEquityTable("x", "y", [[0.5, 2.0], [0.1, 0.5]], [0.5, 0.4])


def test_extended_table_is_gnubgs_extrapolation():
    from bgbot.cube.met import kazaross_xg2_extended

    ext, base = kazaross_xg2_extended(), kazaross_xg2()
    assert ext.max_length == 64 and "GNU Backgammon" in ext.source
    assert (ext.pre_crawford[:25, :25] == base.pre_crawford).all()
    assert (ext.post_crawford[:25] == base.post_crawford).all()
    # gnubg 1.07, `show matchequitytable 64` with Kazaross-XG2: 40-away vs 29-away 22.7182%, 26-away vs 1-away 0.0821%
    assert ext.mwc(40, 29) == pytest.approx(0.227182, abs=1e-6)
    assert ext.mwc(26, 1) == pytest.approx(0.000821, abs=1e-6)
    for a in (26, 33, 50, 64):
        for b in (1, 7, 30, 64):
            assert ext.mwc(a, b) + ext.mwc(b, a) == pytest.approx(1.0, abs=2e-4)
    with pytest.raises(METError, match="65"):
        ext.mwc(65, 3)
