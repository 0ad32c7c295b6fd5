"""Three real model shapes train on axon with zero CPU fallbacks and match the CPU.

Random weights, data made here: a ResNet-18-shaped CNN, a GPT-style decoder (causal
attention, RMS norm, SwiGLU, rotary embeddings) and a small U-Net (group norm, upsampling,
skip connections).
"""

import copy
import math

import torch
import torch.nn.functional as F
from torch import nn

# ---- ResNet-18 shape -------------------------------------------------------------------------


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = (
            nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
            if stride != 1 or cin != cout
            else nn.Identity()
        )

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(y)) + self.shortcut(x))


class ResNet18(nn.Module):
    def __init__(self, classes: int = 10, width: int = 16):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, width, 7, 2, 3, bias=False), nn.BatchNorm2d(width), nn.ReLU(), nn.MaxPool2d(3, 2, 1)
        )
        layers, cin = [], width
        for i, cout in enumerate([width, width * 2, width * 4, width * 8]):
            stride = 1 if i == 0 else 2
            layers += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)]
            cin = cout
        self.layers = nn.Sequential(*layers)
        self.head = nn.Linear(cin, classes)

    def forward(self, x):
        x = self.layers(self.stem(x))
        return self.head(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


# ---- GPT-style decoder ------------------------------------------------------------------------


def rotary(x: torch.Tensor) -> torch.Tensor:
    """Rotary position embedding over the last dim of [batch, heads, seq, dim]."""
    seq, dim = x.shape[-2], x.shape[-1]
    inv = 1.0 / (10000 ** (torch.arange(0, dim, 2, device=x.device, dtype=x.dtype) / dim))
    angles = torch.arange(seq, device=x.device, dtype=x.dtype)[:, None] * inv[None, :]
    cos, sin = torch.cat([angles.cos()] * 2, -1), torch.cat([angles.sin()] * 2, -1)
    half = dim // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], -1)
    return x * cos + rotated * sin


class DecoderBlock(nn.Module):
    def __init__(self, d: int, heads: int):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.RMSNorm(d), nn.RMSNorm(d)
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.proj = nn.Linear(d, d, bias=False)
        self.gate, self.up = nn.Linear(d, 4 * d, bias=False), nn.Linear(d, 4 * d, bias=False)
        self.down = nn.Linear(4 * d, d, bias=False)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        att = F.scaled_dot_product_attention(rotary(q), rotary(k), v, is_causal=True)
        x = x + self.proj(att.transpose(1, 2).reshape(b, t, d))
        h = self.norm2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class TinyGPT(nn.Module):
    def __init__(self, vocab: int = 96, d: int = 64, heads: int = 4, layers: int = 2):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.blocks = nn.Sequential(*[DecoderBlock(d, heads) for _ in range(layers)])
        self.norm = nn.RMSNorm(d)
        self.out = nn.Linear(d, vocab, bias=False)

    def forward(self, tokens):
        return self.out(self.norm(self.blocks(self.embed(tokens))))


# ---- U-Net ----------------------------------------------------------------------------------------


def conv_block(cin: int, cout: int) -> nn.Module:
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.GroupNorm(4, cout), nn.SiLU())


class TinyUNet(nn.Module):
    def __init__(self, c: int = 8):
        super().__init__()
        self.enc1, self.enc2 = conv_block(3, c), conv_block(c, 2 * c)
        self.mid = conv_block(2 * c, 2 * c)
        self.dec2, self.dec1 = conv_block(4 * c, c), conv_block(2 * c, c)
        self.out = nn.Conv2d(c, 3, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        m = self.mid(F.avg_pool2d(e2, 2))
        d2 = self.dec2(torch.cat([F.interpolate(m, scale_factor=2, mode="nearest"), e2], 1))
        d1 = self.dec1(torch.cat([F.interpolate(d2, scale_factor=2, mode="bilinear", align_corners=False), e1], 1))
        return self.out(d1)


# ---- training on both devices ----------------------------------------------------------------


def train(model, batches, loss_fn, device, steps):
    model = model.to(device)
    # SGD with momentum: parameter differences stay proportional to gradient differences
    # (Adam's first steps amplify rounding in near-zero gradients to a full step).
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    losses = []
    for step in range(steps):
        x, y = (t.to(device) for t in batches[step % len(batches)])
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, model


def check_model(model, batches, loss_fn, steps=3, rtol=1e-3):
    reference = copy.deepcopy(model)
    torch.axon.fallback_ops(reset=True)
    axon_losses, axon_model = train(model, batches, loss_fn, "axon", steps)
    fallbacks = torch.axon.fallback_ops()
    cpu_losses, cpu_model = train(reference, batches, loss_fn, "cpu", steps)
    assert fallbacks == {}, f"ops ran on the CPU: {fallbacks}"
    assert all(math.isfinite(v) for v in axon_losses)
    torch.testing.assert_close(torch.tensor(axon_losses), torch.tensor(cpu_losses), rtol=rtol, atol=1e-5)
    for (name, pa), pc in zip(axon_model.named_parameters(), cpu_model.parameters(), strict=True):
        torch.testing.assert_close(pa.detach().cpu(), pc.detach(), rtol=rtol, atol=1e-4, msg=name)


def test_resnet18_shape_trains_natively():
    torch.manual_seed(0)
    # 64x64 keeps 2x2 maps in the last stage: batch norm over 1x1 maps of 4 samples would
    # amplify float rounding far beyond what the comparison is about.
    batches = [(torch.randn(4, 3, 64, 64), torch.randint(0, 10, (4,))) for _ in range(2)]
    check_model(ResNet18(), batches, nn.CrossEntropyLoss())


def test_gpt_decoder_trains_natively():
    torch.manual_seed(0)
    tokens = torch.randint(0, 96, (2, 17))
    batches = [(tokens[:, :-1], tokens[:, 1:])]

    def loss_fn(logits, targets):
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))

    check_model(TinyGPT(), batches, loss_fn)


def test_unet_trains_natively():
    torch.manual_seed(0)
    batches = [(torch.randn(2, 3, 16, 16), torch.randn(2, 3, 16, 16))]
    check_model(TinyUNet(), batches, nn.MSELoss())
