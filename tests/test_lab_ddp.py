"""Two ranks under torchrun compute the gradient one process computes (issue 45, item 6).

test_lab.py's ``test_two_processes_under_torchrun_train_what_one_process_trains`` compares losses after 6 steps of
AdamW with gradients clipped to norm 1: both are blind to a constant factor on every gradient (AdamW divides the
update by √v̂, the clip rescales any norm above 1 to 1), so it passes when the ranks' gradients are summed instead
of averaged, the classic DDP mistake. Here the per-parameter gradients after the first ``backward()``, before the
clip and the optimizer, are compared directly, to a tolerance far below any factor.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest
import torch

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from lab_ddp_worker import first_gradients, tiny_config  # noqa: E402

from poslib.lab import load_stdlib_corpus  # noqa: E402

# float32 sums taken in another order: measured at most 8e-7 of a parameter's largest gradient entry on the
# 2-core machine; a factor of 2 (summed across 2 ranks) is a difference of 100 %
RTOL = 1e-5


@pytest.fixture(scope="module")
def corpus():
    return load_stdlib_corpus()


def test_two_ranks_reduce_the_first_gradients_to_what_one_process_computes(tmp_path, corpus):
    out = tmp_path / "grads"
    env = {k: v for k, v in os.environ.items() if k not in ("WORLD_SIZE", "RANK", "LOCAL_RANK")}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"]
    proc = subprocess.run(
        [*cmd, str(ROOT / "tests" / "lab_ddp_worker.py"), str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    ranks = [torch.load(f"{out}.rank{r}.pt") for r in range(2)]
    assert [r["world_size"] for r in ranks] == [2, 2]
    one = first_gradients(tiny_config(), corpus)  # this process: not distributed, the whole global batch
    two, other = ranks[0]["grads"], ranks[1]["grads"]
    assert list(two) == list(one) and sum(g is not None for g in one.values()) > 5
    worst = {}
    for name, g in one.items():
        if g is None:
            assert two[name] is None and other[name] is None, name
            continue
        assert torch.equal(two[name], other[name]), f"{name}: the ranks hold different reduced gradients"
        scale = g.abs().max().item()
        worst[name] = (two[name] - g).abs().max().item() / scale if scale else (two[name] - g).abs().max().item()
    name = max(worst, key=worst.__getitem__)
    ratio = two[name].norm().item() / one[name].norm().item()
    assert worst[name] <= RTOL, (
        f"{name}: 2 ranks' gradient differs from 1 process's by {worst[name]:.3g} of its largest entry "
        f"(norm ratio {ratio:.4f}; 2.0 is a sum across ranks instead of a mean)"
    )
