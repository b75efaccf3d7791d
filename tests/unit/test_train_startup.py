"""Training sets torch's deterministic flag and runs its optimiser without loading the compiler
(torch._inductor, torch._dynamo: each about a second of every training job's start-up), and the flag still
holds."""

import subprocess
import sys

SCRIPT = """
import sys
from minigo_core.nn import training
import torch
assert not torch.are_deterministic_algorithms_enabled()
training._setup_torch(seed=1, threads=1, backend="dsp", local_rank=0)
print(torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled(),
      "torch._inductor" in sys.modules)
with training.torch_state_kept():
    training.set_deterministic(False, warn_only=False)
    print(torch.are_deterministic_algorithms_enabled())
print(torch.are_deterministic_algorithms_enabled())
import torch._inductor.config as inductor_config
training.set_deterministic(False, warn_only=False)
print(torch.are_deterministic_algorithms_enabled(), inductor_config.deterministic)
"""


def test_training_sets_determinism_without_importing_the_compiler():
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True)
    lines = out.stdout.split("\n")
    assert lines[0] == "True True False"  # on, warn-only, and torch._inductor never imported
    assert lines[1:3] == ["False", "True"]  # torch_state_kept restores it
    assert lines[3] == "False False"  # once the compiler is loaded, its copy of the flag follows too


OPTIMISER = """
import sys
import torch
from minigo_core.nn.flatsgd import FlatSGD
net = torch.nn.Linear(3, 2)
opt = FlatSGD([{"params": [net.weight], "weight_decay": 0.1}, {"params": [net.bias]}], lr=0.1, momentum=0.9)
for _ in range(2):
    opt.zero_grad(set_to_none=False)
    net(torch.ones(1, 3)).sum().backward()
    opt.step()
opt.load_state_dict(opt.state_dict())
opt.zero_grad(set_to_none=True)
print(sorted(m for m in sys.modules if m.startswith(("torch._dynamo", "torch._inductor"))))
"""


def test_the_optimiser_never_imports_the_compiler():
    out = subprocess.run([sys.executable, "-c", OPTIMISER], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
