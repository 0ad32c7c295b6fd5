"""torch.fft on axon (kernels/fft.cl, csrc/ops/fft.cpp) against PyTorch's CPU (pocketfft):
powers of two and other lengths (Bluestein), every normalisation, real and Hermitian forms,
n-dimensional transforms, stft / istft and gradients."""

from __future__ import annotations

import pytest
import torch
from conftest import DEVICE

pytestmark = pytest.mark.usefixtures("no_fallback")

LENGTHS = [1, 2, 8, 64, 3, 7, 12, 100, 257]
# Worst error relative to the largest CPU magnitude: float32 transforms (Bluestein's three
# power-of-two transforms included) stay within a few 1e-6.
REL = {torch.float32: 2e-5, torch.float64: 1e-12, torch.complex64: 2e-5, torch.complex128: 1e-12}


def close(cpu: torch.Tensor, ax: torch.Tensor) -> None:
    assert ax.device.type == "axon" and ax.dtype == cpu.dtype and ax.shape == cpu.shape, (ax.dtype, ax.shape)
    scale = cpu.abs().max().item() if cpu.numel() else 1.0
    err = (ax.cpu() - cpu).abs().max().item() if cpu.numel() else 0.0
    assert err <= REL[cpu.dtype] * max(scale, 1.0), f"error {err:.3g} against {scale:.3g}"


def signal(*shape, dtype=torch.complex64, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, dtype=dtype, generator=g)


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128], ids=str)
def test_fft_ifft_lengths(n, dtype):
    x = signal(3, n, dtype=dtype)
    close(torch.fft.fft(x), torch.fft.fft(x.to(DEVICE)))
    close(torch.fft.ifft(x), torch.fft.ifft(x.to(DEVICE)))


@pytest.mark.parametrize("norm", [None, "ortho", "forward", "backward"])
def test_norms_sizes_and_dims(norm):
    x = signal(4, 6, 5, seed=1)
    ax = x.to(DEVICE)
    close(torch.fft.fft(x, dim=1, norm=norm), torch.fft.fft(ax, dim=1, norm=norm))
    close(torch.fft.fft(x, n=9, dim=0, norm=norm), torch.fft.fft(ax, n=9, dim=0, norm=norm))  # padded
    close(torch.fft.ifft(x, n=3, norm=norm), torch.fft.ifft(ax, n=3, norm=norm))  # trimmed
    close(torch.fft.fftn(x, dim=(0, 2), norm=norm), torch.fft.fftn(ax, dim=(0, 2), norm=norm))
    close(torch.fft.ifft2(x, norm=norm), torch.fft.ifft2(ax, norm=norm))


@pytest.mark.parametrize("n", [1, 2, 8, 7, 12, 33])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_real_forms(n, dtype):
    x = signal(2, 3, n, dtype=dtype, seed=2)
    ax = x.to(DEVICE)
    close(torch.fft.rfft(x), torch.fft.rfft(ax))
    spectrum = torch.fft.rfft(x)
    close(torch.fft.irfft(spectrum, n=n), torch.fft.irfft(spectrum.to(DEVICE), n=n))
    close(torch.fft.hfft(spectrum, n=n), torch.fft.hfft(spectrum.to(DEVICE), n=n))
    close(torch.fft.ihfft(x), torch.fft.ihfft(ax))
    close(torch.fft.rfftn(x, dim=(0, 2)), torch.fft.rfftn(ax, dim=(0, 2)))
    full = torch.fft.rfftn(x, dim=(1, 2))
    close(torch.fft.irfftn(full, s=(3, n), dim=(1, 2)), torch.fft.irfftn(full.to(DEVICE), s=(3, n), dim=(1, 2)))


def test_conjugated_input_and_shift():
    x = signal(5, 8, seed=3)
    close(torch.fft.fft(x.conj()), torch.fft.fft(x.to(DEVICE).conj()))
    close(torch.fft.fftshift(torch.fft.fft(x)), torch.fft.fftshift(torch.fft.fft(x.to(DEVICE))))


def test_stft_istft():
    g = torch.Generator().manual_seed(4)
    audio = torch.randn(2, 400, generator=g)
    window = torch.hann_window(64)
    kw = {"n_fft": 64, "hop_length": 16, "return_complex": True}
    cpu = torch.stft(audio, window=window, **kw)
    ax = torch.stft(audio.to(DEVICE), window=window.to(DEVICE), **kw)
    close(cpu, ax)
    back = torch.istft(ax, n_fft=64, hop_length=16, window=window.to(DEVICE), length=400)
    close(torch.istft(cpu, n_fft=64, hop_length=16, window=window, length=400), back)


def test_gradients_through_rfft():
    x = torch.randn(3, 10)
    xs = [x.clone().requires_grad_(), x.to(DEVICE).requires_grad_()]
    for t in xs:
        spectrum = torch.fft.rfft(t, norm="ortho")
        (spectrum.abs() ** 2).sum().backward()
    close(xs[0].grad, xs[1].grad)


def test_fnet_style_mixing():
    """FNet mixes tokens with the real part of a 2-d transform over sequence and hidden."""
    h = torch.randn(2, 12, 16)
    close(torch.fft.fftn(h, dim=(-2, -1)).real, torch.fft.fftn(h.to(DEVICE), dim=(-2, -1)).real)


@pytest.mark.parametrize(
    "fn,shape,dtype,kwargs",
    [
        (torch.fft.rfft2, (5, 6, 7), torch.float32, {}),
        (torch.fft.rfft2, (5, 6, 7), torch.float32, {"dim": (0, 2)}),
        (torch.fft.fft2, (5, 6, 7), torch.complex64, {}),
        (torch.fft.fft, (5, 6, 7), torch.complex64, {"dim": 0}),
        (torch.fft.irfft2, (5, 6, 7), torch.complex64, {}),
        (torch.fft.hfftn, (5, 6, 7), torch.complex64, {}),
        (torch.fft.ihfft2, (5, 6, 7), torch.float32, {}),
    ],
)
def test_results_are_laid_out_as_on_the_cpu(fn, shape, dtype, kwargs):
    """Results have the CPU's strides, which PyTorch's fake tensors also expect for axon (so
    torch.compile plans the right buffers)."""
    x = torch.randn(*shape, dtype=dtype)
    out = fn(x.to("axon"), **kwargs)
    want = fn(x, **kwargs)
    assert out.stride() == want.stride()
    torch.testing.assert_close(out.cpu(), want, atol=1e-4, rtol=1e-4)
