"""The PyTorch twin of :class:`nnue.network.Network`, used only for training.

Layers (SPEC section 4): a sparse first layer over the 63720 binary features, summed over
the active ones (``nn.EmbeddingBag(mode="sum", sparse=True)`` plus a bias: this *is* the
accumulator), ReLU, a dense hidden layer, ReLU, and four outputs, one per move in the order
up, down, left, right. :meth:`NnueModel.forward` returns logits; the sigmoid that maps them
into WDL space is part of the loss (:func:`played_move_loss`, or :func:`all_moves_loss` for
data with a target per move) and of the numpy network.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from nnue.features import N_FEATURES
from nnue.network import N_OUTPUTS


class NnueModel(nn.Module):
    """``n_features -> hidden[0] -> hidden[1] -> 4`` with ReLU on both hidden layers."""

    def __init__(self, hidden: tuple[int, int] = (512, 512), n_features: int = N_FEATURES) -> None:
        super().__init__()
        h1, h2 = hidden
        self.hidden = (int(h1), int(h2))
        self.n_features = int(n_features)
        # sparse=True: the gradient of a step touches only the rows of the features active
        # in the batch, so SparseAdam updates a few thousand rows instead of 32M weights.
        self.ft = nn.EmbeddingBag(n_features, h1, mode="sum", sparse=True)
        self.ft_bias = nn.Parameter(torch.zeros(h1))
        self.l2 = nn.Linear(h1, h2)
        self.out = nn.Linear(h2, N_OUTPUTS)
        # A position has some 20-100 active features: small first-layer weights keep the
        # summed pre-activation of order one (and int8 quantisation precise).
        nn.init.normal_(self.ft.weight, std=0.02)

    def forward(self, indices: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        """Logits ``[batch, 4]`` for positions given CSR-style: the active features of
        position ``i`` are ``indices[offsets[i]:offsets[i + 1]]`` (``offsets`` holds the
        ``batch`` start positions, as ``nn.EmbeddingBag`` takes them)."""
        acc = self.ft(indices, offsets) + self.ft_bias
        h1 = F.relu(acc)
        h2 = F.relu(self.l2(h1))
        return self.out(h2)

    def dense_parameters(self) -> list[nn.Parameter]:
        """Every parameter except the sparse first-layer weight (for a dense optimiser)."""
        return [p for name, p in self.named_parameters() if name != "ft.weight"]

    @classmethod
    def from_network(cls, network) -> NnueModel:
        """A model holding a :class:`nnue.network.Network`'s weights (a quantised first
        layer back in float: ``w1 * scale``, ``b1 * scale``; ``W2`` likewise), to train further from
        a shipped weight file; the inverse of :meth:`float_weights` up to quantisation."""
        model = cls(tuple(network.hidden), n_features=network.w1.shape[0])
        scale = network.w1_scale.astype("float32")
        with torch.no_grad():
            model.ft.weight.copy_(torch.from_numpy(network.w1.astype("float32") * scale))
            model.ft_bias.copy_(torch.from_numpy(network.b1.astype("float32") * scale))
            model.l2.weight.copy_(torch.from_numpy(network.w2_float.T.copy()))
            model.l2.bias.copy_(torch.from_numpy(network.b2))
            model.out.weight.copy_(torch.from_numpy(network.w3.T.copy()))
            model.out.bias.copy_(torch.from_numpy(network.b3))
        return model

    def float_weights(self) -> dict[str, "object"]:
        """The weights as numpy float32 arrays in :meth:`nnue.network.Network.from_float`'s
        layout: ``w1[F, H1]`` (the embedding table already is one row per feature),
        ``w2[H1, H2]`` and ``w3[H2, 4]`` (a torch Linear weight is ``[out, in]``: transposed)."""
        with torch.no_grad():
            return {
                "w1": self.ft.weight.detach().cpu().numpy().copy(),
                "b1": self.ft_bias.detach().cpu().numpy().copy(),
                "w2": self.l2.weight.detach().cpu().numpy().T.copy(),
                "b2": self.l2.bias.detach().cpu().numpy().copy(),
                "w3": self.out.weight.detach().cpu().numpy().T.copy(),
                "b3": self.out.bias.detach().cpu().numpy().copy(),
            }


def played_move_loss(logits: torch.Tensor, moves: torch.Tensor, targets: torch.Tensor,
                     reduction: str = "mean") -> torch.Tensor:
    """Binary cross-entropy between ``sigmoid(logits[i, moves[i]])`` and ``targets[i]``.

    Only the output of the move actually played enters the loss, so the other three outputs
    of a position get exactly zero gradient (SPEC section 5)."""
    chosen = logits.gather(1, moves.long().view(-1, 1)).squeeze(1)
    return F.binary_cross_entropy_with_logits(chosen, targets.float(), reduction=reduction)


def all_moves_loss(logits: torch.Tensor, targets: torch.Tensor,
                   reduction: str = "mean") -> torch.Tensor:
    """Binary cross-entropy between all four ``sigmoid(logits[i, m])`` and
    ``targets[i, m]`` (self-play's ``move_targets``: the search scored every move), averaged
    over moves; ``reduction="none"`` gives one value per position."""
    loss = F.binary_cross_entropy_with_logits(logits, targets.float(), reduction="none").mean(dim=1)
    return loss.mean() if reduction == "mean" else loss


def make_optimisers(model: NnueModel,
                    lr: float) -> tuple[torch.optim.Optimizer, torch.optim.Optimizer]:
    """SparseAdam for the embedding table (lazy: only rows with a gradient move) and Adam
    for the dense parameters."""
    sparse = torch.optim.SparseAdam([model.ft.weight], lr=lr)
    dense = torch.optim.Adam(model.dense_parameters(), lr=lr)
    return sparse, dense
