"""The network (SPEC §4): forward pass, quantisation, weight file and its failure modes."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest

import nnue.network as network_module
from nnue.features import N_FEATURES, active_features
from nnue.network import Network, NetworkFileError, load_default
from snake.diagram import from_ascii

SMALL = (32, 16)


@pytest.fixture(scope="module")
def small_net() -> Network:
    return Network.random(7, hidden=SMALL)


def some_states():
    """A few realistic feature sets (drawn boards of all three sizes, several rulesets)."""
    drawings = [("""
        . . . . . . .
        . A a a . * .
        . . . a . . .
        . . . . . . .
        . B b b . . .
        . . . b . . .
        * . . . . . ~
    """, "standard"), ("""
        . . . . . . .
        . A a a . . .
        . . . a a . .
        . . . . . . .
        . B b b . . .
        . . . b . . .
        . . . . . . .
    """, "wrapped")]
    out = [active_features(r.state, r.you) for r in
           (from_ascii(d, rs) for d, rs in drawings)]
    rng = np.random.default_rng(3)
    for _ in range(30):
        side = int(rng.choice([7, 11, 19]))
        rows = [["."] * side for _ in range(side)]
        for letter in "ABCD":
            x, y = (int(v) for v in rng.integers(0, side, 2))
            if rows[y][x] == ".":
                rows[y][x] = letter
        for _ in range(int(rng.integers(1, 8))):
            x, y = (int(v) for v in rng.integers(0, side, 2))
            if rows[y][x] == ".":
                rows[y][x] = "*"
        if "A" not in {c for r in rows for c in r}:
            rows[0][0] = "A"
        ruleset = str(rng.choice(["standard", "royale", "constrictor", "solo", "squad",
                                  "wrapped"]))
        req = from_ascii("\n".join(" ".join(r) for r in rows), ruleset,
                         stacked={k: 2 for k in "ABCD"})
        out.append(active_features(req.state, req.you))
    return out


def reference(w1, b1, w2, b2, w3, b3, active):
    """SPEC §4 written out in float64."""
    a = b1.astype(np.float64) + w1[active].astype(np.float64).sum(axis=0)
    h1 = np.maximum(a, 0)
    h2 = np.maximum(h1 @ w2 + b2, 0)
    return 1 / (1 + np.exp(-(h2 @ w3 + b3)))


def test_forward_matches_the_formula():
    rng = np.random.default_rng(0)
    w1 = rng.normal(0, 0.2, (N_FEATURES, 24)).astype(np.float32)
    b1 = rng.normal(0, 0.1, 24).astype(np.float32)
    w2 = rng.normal(0, 0.3, (24, 12)).astype(np.float32)
    b2 = rng.normal(0, 0.1, 12).astype(np.float32)
    w3 = rng.normal(0, 0.3, (12, 4)).astype(np.float32)
    b3 = np.array([0.5, -0.5, 0.0, 1.0], np.float32)
    net = Network.from_float(w1, b1, w2, b2, w3, b3)
    assert not net.quantised and net.hidden == (24, 12)
    for active in some_states():
        out = net.evaluate(active)
        assert out.shape == (4,) and out.dtype == np.float32
        assert ((0 <= out) & (out <= 1)).all()
        assert np.allclose(out, reference(w1, b1, w2, b2, w3, b3, active), atol=1e-5)
    # Output order: a bias on one output moves that move's score only.
    empty = np.array([], dtype=np.int32)
    base = net.evaluate(empty)
    b3_up = b3.copy()
    b3_up[0] += 3
    up = Network.from_float(w1, b1, w2, b2, w3, b3_up).evaluate(empty)
    assert up[0] > base[0] and np.allclose(up[1:], base[1:])


def test_forward_batches(small_net):
    states = some_states()
    pre = np.stack([small_net.pre_activation(small_net.accumulate(a)) for a in states])
    batch = small_net.forward(pre)
    assert batch.shape == (len(states), 4)
    one_by_one = np.stack([small_net.evaluate(a) for a in states])
    assert np.allclose(batch, one_by_one, atol=1e-6)


def test_quantised_close_to_float(small_net):
    q = small_net.quantise()
    assert q.quantised and q.w1.dtype == np.int8 and q.b1.dtype == np.int32
    assert np.abs(q.w1).max() <= 127
    diffs = [np.abs(q.evaluate(a) - small_net.evaluate(a)).max() for a in some_states()]
    assert max(diffs) < 0.02
    # The dequantised weights are within half a step of the float ones, column by column
    # for W1, row by row for W2.
    err = np.abs(q.w1.astype(np.float32) * q.w1_scale - small_net.w1).max(axis=0)
    assert (err <= q.w1_scale * 0.5 + 1e-7).all()
    assert q.w2.dtype == np.int8 and np.abs(q.w2).max() <= 127
    err2 = np.abs(q.w2_float - small_net.w2).max(axis=1)
    assert (err2 <= q.w2_scale * 0.5 + 1e-7).all()


def test_compiled_forward_equals_numpy_forward(small_net):
    """The compiled single-position pass (int8 W2 rows, scale per row) and numpy's batch
    pass (W2 dequantised, BLAS) give the same scores to float32 rounding."""
    for net in (small_net, small_net.quantise()):
        for a in some_states():
            acc = net.accumulate(a)
            assert np.allclose(net.score(acc), net.forward(net.pre_activation(acc)), atol=1e-5)


def test_compiled_forward_equals_numpy_for_any_number_of_units_on(small_net):
    """The compiled pass adds the rows of the units that are on four at a time and the last
    one to three alone: every count of units on, none to all, gives numpy's scores."""
    net = small_net.quantise()
    rng = np.random.default_rng(3)
    h1 = net.w2.shape[0]
    for n_on in list(range(10)) + [h1 - 1, h1]:
        acc = -rng.integers(1, 5000, h1).astype(np.int32)
        acc[rng.choice(h1, n_on, replace=False)] *= -1
        assert int((net.pre_activation(acc) > 0).sum()) == n_on
        assert np.allclose(net.score(acc), net.forward(net.pre_activation(acc)), atol=1e-5)


def test_version_1_file_loads_as_the_same_network(tmp_path, small_net):
    """A version 1 file (float W2, no w2_scale) is read and W2 quantised on loading: it plays
    exactly as the same network saved in version 2."""
    v2 = tmp_path / "v2.npz"
    small_net.save(v2, {"note": "v1 test"})
    v1 = tmp_path / "v1.npz"
    q = small_net.quantise()
    arrays = {"w1": q.w1, "w1_scale": q.w1_scale, "b1": q.b1, "w2": small_net.w2,
              "b2": q.b2, "w3": q.w3, "b3": q.b3}
    with np.load(v2, allow_pickle=False) as npz:
        header = json.loads(str(npz["header"][()]))
    header["version"] = 1
    header["sha256"] = network_module._checksum(arrays, network_module._ARRAYS_V1)
    np.savez(v1, header=np.array(json.dumps(header)), **arrays)
    old, new = Network.load(v1), Network.load(v2)
    for name in network_module._ARRAYS:
        assert np.array_equal(getattr(old, name), getattr(new, name)), name
    for a in some_states():
        assert np.array_equal(old.evaluate(a), new.evaluate(a))
    # A version 1 file is still checked: a header that is not JSON, a missing array, and a
    # changed weight (its checksum) are refused.
    with np.load(v1, allow_pickle=False) as npz:
        kept = {k: npz[k] for k in npz.files if k != "header"}
    np.savez(tmp_path / "v1-text.npz", header=np.array("{oops"), **kept)
    refused(tmp_path / "v1-text.npz", "not JSON")
    np.savez(tmp_path / "v1-short.npz", header=np.array(json.dumps(header)),
             **{k: v for k, v in kept.items() if k != "b3"})
    refused(tmp_path / "v1-short.npz", r"missing arrays \['b3'\]")
    arrays["w2"] = arrays["w2"] + np.float32(1.0)
    np.savez(v1, header=np.array(json.dumps(header)), **arrays)
    refused(v1, "checksum mismatch")


def test_round_trip_keeps_outputs_and_manifest(tmp_path, small_net):
    path = tmp_path / "net.npz"
    manifest = {"data": "unit test", "games": 3, "positions": 120, "epochs": 1,
                "validation_loss": 0.693, "date": "2026-01-01"}
    small_net.save(path, manifest)
    loaded = Network.load(path)
    assert loaded.quantised and loaded.hidden == SMALL
    assert loaded.manifest == manifest
    q = small_net.quantise()
    for a in some_states():
        assert np.array_equal(loaded.evaluate(a), q.evaluate(a))
    with np.load(path, allow_pickle=False) as npz:
        header = json.loads(str(npz["header"][()]))
    assert header["format"] == "nuppeppou-nnue" and header["version"] == 2
    assert header["architecture"]["hidden"] == list(SMALL)
    assert header["architecture"]["output_order"] == ["up", "down", "left", "right"]
    assert len(header["sha256"]) == 64
    # Saving the loaded network again gives the same arrays and checksum.
    loaded.save(tmp_path / "again.npz")
    with np.load(tmp_path / "again.npz", allow_pickle=False) as npz:
        again = json.loads(str(npz["header"][()]))
    assert again["sha256"] == header["sha256"] and again["manifest"] == manifest


def test_manifest_must_be_json(tmp_path, small_net):
    with pytest.raises(ValueError, match="manifest"):
        small_net.save(tmp_path / "x.npz", {"when": object()})
    assert not (tmp_path / "x.npz").exists()


def rewrite(src, dst, *, header_edit=None, arrays_edit=None, keep_checksum=False):
    """Copy a weight file, editing its header and arrays; the checksum is recomputed
    unless ``keep_checksum``."""
    with np.load(src, allow_pickle=False) as npz:
        header = json.loads(str(npz["header"][()]))
        arrays = {k: npz[k] for k in npz.files if k != "header"}
    if arrays_edit:
        arrays_edit(arrays)
    if not keep_checksum and all(k in arrays for k in network_module._ARRAYS):
        header["sha256"] = network_module._checksum(arrays)
    if header_edit:
        header_edit(header)
    np.savez(dst, header=np.array(json.dumps(header)), **arrays)


@pytest.fixture
def saved(tmp_path, small_net):
    path = tmp_path / "good.npz"
    small_net.save(path, {"note": "good"})
    return path


def refused(path, match):
    with pytest.raises(NetworkFileError, match=match) as info:
        Network.load(path)
    assert str(path) in str(info.value)


def test_missing_file_is_refused(tmp_path):
    refused(tmp_path / "nope.npz", "no such weight file")


def test_garbage_and_truncated_files_are_refused(tmp_path, saved):
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"this is not a zip file at all" * 10)
    refused(junk, "unreadable")
    data = saved.read_bytes()
    for cut in (len(data) // 2, len(data) - 30, 100):
        short = tmp_path / f"short{cut}.npz"
        short.write_bytes(data[:cut])
        refused(short, "unreadable|truncated|checksum")


def test_flipped_byte_is_refused(tmp_path, saved):
    # Change one weight but keep the header's checksum: the checksum catches it.
    bad = tmp_path / "flipped.npz"

    def flip(arrays):
        arrays["w3"] = arrays["w3"].copy()
        arrays["w3"][0, 0] += 1.0
    rewrite(saved, bad, arrays_edit=flip, keep_checksum=True)
    refused(bad, "checksum mismatch")


def test_wrong_shapes_and_dtypes_are_refused(tmp_path, saved):
    cases = {
        "w2 shape": (lambda a: a.__setitem__("w2", a["w2"][:, :-1]), "w2 has shape|b2 has shape"),
        "w1 rows": (lambda a: a.__setitem__("w1", a["w1"][:-1]), "w1 has shape"),
        "w1 float": (lambda a: a.__setitem__("w1", a["w1"].astype(np.float32)), "w1 has dtype"),
        "w2 float": (lambda a: a.__setitem__("w2", a["w2"].astype(np.float32)), "w2 has dtype"),
        "w2_scale missing": (lambda a: a.pop("w2_scale"), "missing arrays"),
        "w3 outputs": (lambda a: a.__setitem__("w3", np.zeros((SMALL[1], 3), np.float32)),
                       "w3 has shape"),
        "b1 missing": (lambda a: a.pop("b1"), "missing arrays"),
        "nan": (lambda a: a.__setitem__("b2", np.full(SMALL[1], np.nan, np.float32)), "NaN"),
        # the int16 sums of W1 rows assume |w| <= 127: -128 is no weight save() writes
        "w1 -128": (lambda a: a.__setitem__("w1", np.where(a["w1"] == a["w1"].min(), -128,
                                                           a["w1"]).astype(np.int8)), "-128"),
        "w2 -128": (lambda a: a.__setitem__("w2", np.full_like(a["w2"], -128)), "-128"),
    }
    for name, (edit, match) in cases.items():
        bad = tmp_path / f"{name}.npz"
        rewrite(saved, bad, arrays_edit=edit)
        refused(bad, match)


def test_a_unit_without_weights_keeps_its_bias():
    """A first-layer unit whose W1 column is all zeros is its bias alone: quantised, it
    keeps it (a scale of 1 would round 0.4 to 0)."""
    from nnue.network import quantise_w1
    w1 = np.zeros((5, 3), np.float32)
    w1[:, 1] = [0.5, -0.25, 0, 0, 1.0]
    b1 = np.array([0.4, 0.3, 0.0], np.float32)
    q, scale, bq = quantise_w1(w1, b1)
    assert bq[0] * scale[0] == pytest.approx(0.4, rel=1e-6)
    assert bq[1] * scale[1] == pytest.approx(0.3, abs=scale[1] / 2)
    assert bq[2] == 0 and (q[:, 0] == 0).all() and (q[:, 2] == 0).all()


def test_wrong_header_is_refused(tmp_path, saved):
    cases = {
        "format": (lambda h: h.__setitem__("format", "other"), "not a nuppeppou-nnue file"),
        "version": (lambda h: h.__setitem__("version", 99), "format version 99"),
        "features": (lambda h: h["architecture"].__setitem__("features", 768), "architecture"),
        "hidden": (lambda h: h["architecture"].__setitem__("hidden", [512, 512]),
                   "hidden sizes"),
        "order": (lambda h: h["architecture"].__setitem__("output_order", ["left", "right",
                                                                          "up", "down"]),
                  "output order"),
    }
    for name, (edit, match) in cases.items():
        bad = tmp_path / f"{name}.npz"
        rewrite(saved, bad, header_edit=edit)
        refused(bad, match)
    no_header = tmp_path / "no_header.npz"
    with np.load(saved, allow_pickle=False) as npz:
        np.savez(no_header, **{k: npz[k] for k in npz.files if k != "header"})
    refused(no_header, "no header")
    not_json = tmp_path / "not_json.npz"
    with np.load(saved, allow_pickle=False) as npz:
        np.savez(not_json, header=np.array("{oops"), **{k: npz[k] for k in npz.files
                                                         if k != "header"})
    refused(not_json, "not JSON")


def test_pickled_arrays_are_not_loaded(tmp_path, saved):
    bad = tmp_path / "pickle.npz"
    with np.load(saved, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    arrays["header"] = np.array([{"format": "nuppeppou-nnue"}], dtype=object)
    np.savez(bad, **arrays)
    refused(bad, "unreadable")


def test_load_default(tmp_path, monkeypatch, small_net):
    monkeypatch.setattr(network_module, "DEFAULT_WEIGHTS", tmp_path / "weights" / "nnue.npz")
    assert load_default() is None
    small_net.save(tmp_path / "weights" / "nnue.npz", {"note": "default"})
    net = load_default()
    assert net is not None and net.manifest == {"note": "default"}
    (tmp_path / "weights" / "nnue.npz").write_bytes(b"PK\x03\x04broken")
    with pytest.raises(NetworkFileError):
        load_default()


def test_default_path_is_in_the_repository():
    assert network_module.DEFAULT_WEIGHTS.parts[-2:] == ("weights", "nnue.npz")
    assert (network_module.DEFAULT_WEIGHTS.parent.parent / "nnue" / "network.py").is_file()


def test_full_size_file_fits_and_round_trips(tmp_path):
    net = Network.random(11)
    assert net.hidden == (512, 512) and net.w1.shape == (63720, 512)
    path = tmp_path / "full.npz"
    net.save(path, {"note": "full size"})
    assert path.stat().st_size <= 40_000_000
    loaded = Network.load(path)
    assert loaded.w1.dtype == np.int8 and loaded.w1.shape == (63720, 512)
    q = net.quantise()
    states = some_states()
    for a in states[:5]:
        assert np.array_equal(loaded.evaluate(a), q.evaluate(a))
        assert np.abs(loaded.evaluate(a) - net.evaluate(a)).max() < 0.02
    assert zipfile.is_zipfile(path)


def test_the_shipped_network_is_the_one_its_manifest_describes():
    """weights/MANIFEST.json names the network's bytes and checksum (an export writes
    both), and everything shipped in weights/ stays within the 40 MB SPEC §4 allows."""
    import hashlib

    weights = network_module.DEFAULT_WEIGHTS
    manifest = json.loads((weights.parent / "MANIFEST.json").read_text())
    data = weights.read_bytes()
    assert manifest["weights_file"] == weights.name
    assert (manifest["bytes"], manifest["sha256"]) == (len(data), hashlib.sha256(data).hexdigest())
    assert sum(p.stat().st_size for p in weights.parent.iterdir()) <= 40 * 1000 * 1000
