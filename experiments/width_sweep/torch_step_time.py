"""Times one full-batch Adam step of the width sweep's 1-m-1 ReLU net in PyTorch.

The yardstick for `ffn-lab bench sweep`: same data (400 points on [-2, 2],
sin(3x)), same init family, same optimizer, float32, one thread. Prints the
median over repeats of the mean time per step, per width, in microseconds.
Run with Debian's python3-torch: /usr/bin/python3 torch_step_time.py
"""
import statistics
import sys
import time

import torch

torch.set_num_threads(1)
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
x = torch.linspace(-2, 2, 400).unsqueeze(1)
y = torch.sin(3 * x)
results = {}
for m in (2, 4, 8, 16, 32):
    per_step = []
    for r in range(repeats):
        torch.manual_seed(r)
        net = torch.nn.Sequential(torch.nn.Linear(1, m), torch.nn.ReLU(), torch.nn.Linear(m, 1))
        with torch.no_grad():
            w = torch.randn(m, 1)
            c = torch.rand(m, 1) * 4 - 2
            net[0].weight.copy_(w)
            net[0].bias.copy_((-w * c).squeeze(1))
            net[2].weight.normal_(0, m ** -0.5)
            net[2].bias.zero_()
        opt = torch.optim.Adam(net.parameters(), lr=1e-3)
        loss_fn = torch.nn.MSELoss()
        start = time.perf_counter()
        for _ in range(steps):
            opt.zero_grad()
            loss = loss_fn(net(x), y)
            loss.backward()
            opt.step()
        per_step.append((time.perf_counter() - start) / steps * 1e6)
    results[m] = statistics.median(per_step)
    print(f"m={m:2d}  {results[m]:7.1f} us/step (median of {repeats} x {steps} steps)")
print(f"median over widths: {statistics.median(results.values()):.1f} us/step; "
      f"mean: {statistics.mean(results.values()):.1f} us/step")
