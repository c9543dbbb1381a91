"""Failure: fp16 activations overflow to inf inside a model the script builds (no clusterdoc code in it).

    clusterdoc submit --nodes 2 --overflow jobs/fail_overflow.py

With --overflow, clusterdoc.run puts inf/nan detection on every module of every model through torch's
global module hooks; the report names the first module whose output overflowed, per rank.
"""

import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 1))
with torch.no_grad():
    model[2].weight.fill_(3000.0)  # 8 inputs x 3000 x ~3000 > 65504, the largest float16
    model[0].weight.fill_(400.0)
model = model.half()
x = torch.ones(4, 8, dtype=torch.float16)
y = model(x)
print(f"output: {y.flatten().tolist()}")
if not torch.isfinite(y).all():
    raise SystemExit("the output is not finite (run with --overflow to see which module overflowed first)")
