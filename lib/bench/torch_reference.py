"""PyTorch's time for the steps `ffn-lab bench` times, measured in the same run.

ffn-lab embeds this file and runs it as `python3 -c <this> MODE ARGS`, with
OPENBLAS_NUM_THREADS and OMP_NUM_THREADS set to the threads measured. It
prints one JSON object per line: first what it ran on (torch's version and
the BLAS library it loaded, with OpenBLAS's kernel core), then one record
per measurement. Each mode mirrors ffn-lab's own loop: the same shapes,
float32, the same optimizer, timed steps after a warm-up.

  train THREADS TOKENS D HIDDEN SWIGLU_HIDDEN
      serves ffn-lab's requests, one per line on stdin: a block name (relu,
      gelu, swiglu) asks for one training step of that FFN block (MSE
      against a fixed target, Adam, x needs no gradient), timed in
      milliseconds; the first request for a block builds it and takes a
      warm-up step first. ffn-lab alternates these steps with its own, so
      that both see the same moments of a shared machine.
  sweep STEPS REPEATS SAMPLES ACTIVATION:WIDTH...
      one full-batch Adam step of the width sweep's 1-m-1 net on sin(3x)
      over [-2, 2], in microseconds (the mean over STEPS, median of REPEATS)
  tms THREADS SECONDS REPEATS N:M:BATCH:INSTANCES...
      one Adam step of Elhage et al.'s toy model of superposition in the
      paper's code's form: INSTANCES models as one with an instances axis,
      W of [instances, N, M], a fresh batch each step (two uniforms per
      value, as the paper draws them), ReLU(W^T W x + b), the
      importance-weighted squared error; in microseconds per model and
      step (steps for about SECONDS a repeat, median of REPEATS)
"""
import ctypes
import json
import statistics
import sys
import time

import torch


def blas():
    """The BLAS shared library this process loaded, and OpenBLAS's own words."""
    with open("/proc/self/maps") as maps:
        paths = sorted({line.split()[-1] for line in maps if "blas" in line.split()[-1].lower()})
    for path in paths:
        if "openblas" in path:
            lib = ctypes.CDLL(path)
            lib.openblas_get_config.restype = ctypes.c_char_p
            lib.openblas_get_corename.restype = ctypes.c_char_p
            return (f"{path}: {lib.openblas_get_config().decode()} "
                    f"core {lib.openblas_get_corename().decode()}")
    return ", ".join(paths) or "no BLAS library loaded"


def emit(**record):
    print(json.dumps(record), flush=True)


class Gated(torch.nn.Module):
    def __init__(self, d, hidden):
        super().__init__()
        self.gate = torch.nn.Linear(d, hidden)
        self.up = torch.nn.Linear(d, hidden)
        self.down = torch.nn.Linear(hidden, d)

    def forward(self, x):
        return self.down(torch.nn.functional.silu(self.gate(x)) * self.up(x))


def train(threads, tokens, d, hidden, swiglu_hidden):
    torch.manual_seed(0)
    x, y = torch.randn(tokens, d), torch.randn(tokens, d)
    steps = {}
    for line in sys.stdin:
        block = line.strip()
        if not block:
            break
        if block not in steps:
            if block == "swiglu":
                net = Gated(d, swiglu_hidden)
            else:
                act = torch.nn.ReLU() if block == "relu" else torch.nn.GELU()
                net = torch.nn.Sequential(torch.nn.Linear(d, hidden), act, torch.nn.Linear(hidden, d))
            opt = torch.optim.Adam(net.parameters(), lr=1e-3)

            def step(net=net, opt=opt):
                opt.zero_grad()
                torch.nn.functional.mse_loss(net(x), y).backward()
                opt.step()

            step()  # warm-up: PyTorch allocates its buffers here
            steps[block] = step
        start = time.perf_counter()
        steps[block]()
        emit(block=block, ms=(time.perf_counter() - start) * 1e3)


ACTIVATIONS = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh, "gelu": torch.nn.GELU,
               "gelu_tanh": lambda: torch.nn.GELU(approximate="tanh"), "silu": torch.nn.SiLU,
               "sigmoid": torch.nn.Sigmoid, "identity": torch.nn.Identity}


def sweep(steps, repeats, samples, *nets):
    x = torch.linspace(-2, 2, samples).unsqueeze(1)
    y = torch.sin(3 * x)
    for spec in nets:
        activation, width = spec.split(":")
        m = int(width)
        per_step = []
        for r in range(repeats):
            torch.manual_seed(r)
            net = torch.nn.Sequential(torch.nn.Linear(1, m), ACTIVATIONS[activation](), torch.nn.Linear(m, 1))
            opt = torch.optim.Adam(net.parameters(), lr=1e-3)
            start = time.perf_counter()
            for _ in range(steps):
                opt.zero_grad()
                torch.nn.functional.mse_loss(net(x), y).backward()
                opt.step()
            per_step.append((time.perf_counter() - start) / steps * 1e6)
        emit(activation=activation, width=m, us_per_step=statistics.median(per_step))


def tms(seconds, repeats, *shapes):
    for spec in shapes:
        n, m, batch, instances = map(int, spec.split(":"))
        torch.manual_seed(0)
        W = torch.nn.Parameter(torch.nn.init.xavier_normal_(torch.empty(instances, n, m)))
        b = torch.nn.Parameter(torch.zeros(instances, n))
        importance = (0.9 ** torch.arange(n, dtype=torch.float32))[None, None, :]
        density = torch.full((instances, 1), 0.1)
        opt = torch.optim.Adam([W, b], lr=1e-3)

        def step():
            values = torch.rand(batch, instances, n)
            x = torch.where(torch.rand(batch, instances, n) <= density, values, torch.zeros(()))
            h = torch.einsum("bif,ifh->bih", x, W)
            out = torch.relu(torch.einsum("bih,ifh->bif", h, W) + b)
            loss = (importance * (x - out) ** 2).mean(dim=(0, 2)).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()

        for _ in range(3):
            step()  # warm-up
        per_step = []
        for _ in range(repeats):
            start, steps = time.perf_counter(), 0
            while time.perf_counter() - start < seconds:
                step()
                steps += 1
            per_step.append((time.perf_counter() - start) / steps / instances * 1e6)
        emit(shape=spec, us_per_model_step=statistics.median(per_step))


def main(mode, *args):
    threads = int(args[0]) if mode in ("train", "tms") else 1
    torch.set_num_threads(threads)
    emit(torch=torch.__version__, blas=blas(), threads=threads)
    if mode == "train":
        train(*map(int, args[:5]))
    elif mode == "tms":
        tms(float(args[1]), int(args[2]), *args[3:])
    else:
        sweep(*map(int, args[:3]), *args[3:])


try:
    main(*sys.argv[1:])
except Exception as e:  # one line for ffn-lab to show, instead of a traceback it hides
    emit(error=f"{type(e).__name__}: {e}")
    sys.exit(1)
