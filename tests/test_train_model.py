"""The training model: loss on the played move only, export layout."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from nnue.network import Network  # noqa: E402
from training.model import NnueModel, all_moves_loss, make_optimisers, played_move_loss  # noqa: E402


def test_loss_gradient_reaches_only_the_played_moves_output():
    logits = torch.tensor([[0.3, -1.0, 2.0, 0.5], [1.5, 0.2, -0.7, 0.1]], requires_grad=True)
    moves = torch.tensor([2, 0])
    targets = torch.tensor([1.0, 0.0])
    played_move_loss(logits, moves, targets).backward()
    grad = logits.grad.numpy()
    mask = np.zeros_like(grad, bool)
    mask[[0, 1], [2, 0]] = True
    assert np.all(grad[~mask] == 0)
    assert np.all(grad[mask] != 0)


def test_changing_other_outputs_changes_neither_loss_nor_gradient():
    moves = torch.tensor([1, 3, 0])
    targets = torch.tensor([0.5, 1.0, 0.0])
    base = torch.tensor([[0.1, 0.4, -0.2, 0.9], [0.0, 0.0, 0.0, -2.0], [1.0, 2.0, 3.0, 4.0]])
    other = base.clone()
    other[0, [0, 2, 3]] = torch.tensor([5.0, -7.0, 3.0])
    other[1, :3] = 9.0
    other[2, 1:] = -4.0
    results = []
    for logits in (base, other):
        logits = logits.clone().requires_grad_()
        loss = played_move_loss(logits, moves, targets)
        loss.backward()
        results.append((loss.item(), logits.grad[torch.arange(3), moves].clone()))
    assert results[0][0] == pytest.approx(results[1][0])
    assert torch.equal(results[0][1], results[1][1])


def test_with_a_target_per_move_every_output_learns():
    """Self-play scores every move: the loss is the mean of the four moves' cross-entropies,
    and each output gets its own gradient, pulling it toward its own target."""
    logits = torch.zeros((1, 4), requires_grad=True)
    targets = torch.tensor([[1.0, 0.0, 0.5, 0.25]])
    loss = all_moves_loss(logits, targets)
    assert float(loss.detach()) == pytest.approx(np.log(2))
    loss.backward()
    grad = logits.grad.numpy()[0]
    # d/dz of BCE(sigmoid z, t) at z = 0 is (0.5 - t), averaged over 4 moves
    assert np.allclose(grad, (0.5 - targets.numpy()[0]) / 4)


def test_loss_is_binary_cross_entropy_of_the_sigmoid():
    logits = torch.tensor([[0.0, 0.0, 0.0, 0.0]])
    loss = played_move_loss(logits, torch.tensor([3]), torch.tensor([1.0]))
    assert float(loss) == pytest.approx(np.log(2))


def test_embedding_layer_gets_sparse_gradients_and_the_optimiser_touches_only_active_rows():
    torch.manual_seed(0)
    model = NnueModel((8, 4))
    sparse, dense = make_optimisers(model, 1e-2)
    before = model.ft.weight.detach().clone()
    indices = torch.tensor([3, 70, 5000, 70, 63719])
    offsets = torch.tensor([0, 2])
    loss = played_move_loss(model(indices, offsets), torch.tensor([0, 2]), torch.tensor([1.0, 0.0]))
    loss.backward()
    assert model.ft.weight.grad.is_sparse
    sparse.step()
    dense.step()
    changed = torch.nonzero((model.ft.weight.detach() != before).any(dim=1)).flatten().tolist()
    assert changed == [3, 70, 5000, 63719]


def test_float_weights_give_the_same_scores_in_numpy():
    torch.manual_seed(1)
    model = NnueModel((16, 8))
    with torch.no_grad():
        model.ft_bias.normal_(0, 0.1)
    active = np.array([10, 200, 3000, 40000], dtype=np.int32)
    want = torch.sigmoid(model(torch.from_numpy(active.astype(np.int64)),
                               torch.tensor([0]))).detach().numpy()[0]
    net = Network.from_float(**model.float_weights())
    assert net.hidden == (16, 8)
    np.testing.assert_allclose(net.evaluate(active), want, atol=1e-6)


def test_a_network_file_loads_back_into_the_model_exactly():
    """``fit --init weights/nnue.npz``: the quantised file back in float, exported again,
    is the same file's weights, and gives the same scores."""
    net = Network.random(5, (16, 8), quantise=True)
    model = NnueModel.from_network(net)
    again = Network.from_float(**model.float_weights(), quantise=True)
    assert np.array_equal(again.w1, net.w1) and np.array_equal(again.b1, net.b1)
    assert np.allclose(again.w1_scale, net.w1_scale, rtol=1e-6)
    for name in ("w2", "b2", "w3", "b3"):
        assert np.array_equal(getattr(again, name), getattr(net, name))
    assert np.allclose(again.w2_scale, net.w2_scale, rtol=1e-6)
    active = np.array([3, 700, 5000, 12345])
    with torch.no_grad():
        logits = model(torch.from_numpy(active), torch.tensor([0]))
    assert np.allclose(torch.sigmoid(logits).numpy()[0], net.evaluate(active), atol=1e-5)
