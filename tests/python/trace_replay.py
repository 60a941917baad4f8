"""One rank of test_trace_check.py's gloo run: the collectives seam's plan
makes on this rank (read from the lines `seam run --write-trace` wrote),
called for real in torch.distributed with seam.trace installed, so the hook
writes what the rank ran. With "twice", the second pipeline rank's TP group
completes again what it received: an all-reduce the plan does not have.

Gloo on torch 1.13 has no bfloat16: every tensor is float32.

Usage: trace_replay.py RANK WORLD INIT_METHOD PLAN_DIR TRACE_DIR [twice]
"""
import json
import pathlib
import sys

import torch
import torch.distributed as dist

import seam.trace as trace


def main() -> None:
    rank, world, init, plan_dir, trace_dir = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
    twice = len(sys.argv) > 6 and sys.argv[6] == "twice"
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world)
    plans = [[json.loads(line) for line in (pathlib.Path(plan_dir) / f"seam-trace.{r}.jsonl").read_text().splitlines()]
             for r in range(world)]
    # Every process makes every group, in one order.
    groups: dict[tuple[int, ...], object] = {}
    for events in plans:
        for e in events:
            key = tuple(e["group"])
            if e["op"] not in ("send", "recv") and key not in groups:
                groups[key] = dist.new_group(list(key))
    trace.install(trace_dir)
    received = 0
    for e in plans[rank]:
        t = torch.full(e["shape"], float(rank + 1), dtype=torch.float32)
        if e["op"] == "all_reduce":
            dist.all_reduce(t, group=groups[tuple(e["group"])])
        elif e["op"] == "all_gather":
            outs = [torch.empty_like(t) for _ in e["group"]]
            dist.all_gather(outs, t, group=groups[tuple(e["group"])])
        elif e["op"] == "send":
            dist.send(t, dst=e["peer"])
        elif e["op"] == "recv":
            dist.recv(t, src=e["peer"])
            received += 1
            if twice and received == 2:  # both slices in: the sum completed again
                dist.all_reduce(torch.zeros(32, 64), group=groups[(2, 3)])
        else:
            raise SystemExit(f"rank {rank}: the plan's {e['op']} is not replayed here")
    trace.uninstall()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
