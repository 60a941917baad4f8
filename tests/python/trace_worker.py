"""One rank of test_trace.py's gloo run: every call seam.trace wraps, each
with its own sizes, its results checked against what the collective must
give; then uninstall, and the same calls untraced; then, traced again, a
receive that never completes (the test kills it once its line is written).

Gloo on torch 1.13 runs all_reduce (not AVG), all_gather, all_to_all_single,
broadcast, reduce, send/recv, isend/irecv and batch_isend_irecv. It refuses
all_gather_into_tensor, _all_gather_base, reduce_scatter,
reduce_scatter_tensor, _reduce_scatter_base, all_to_all and AVG with a
RuntimeError as the call reaches the process group: those are called for
real too (their lines are written before the call), and the error must be
the one torch raises without the hook.

Usage: trace_worker.py RANK WORLD INIT_METHOD TRACE_DIR RESULT_FILE
"""
import json
import os
import sys
import time

import torch
import torch.distributed as dist

import seam.trace as trace

WRAPPED = ("all_reduce", "all_gather_into_tensor", "_all_gather_base", "all_gather", "reduce_scatter_tensor",
           "_reduce_scatter_base", "reduce_scatter", "all_to_all_single", "all_to_all", "broadcast", "reduce", "send",
           "recv", "isend", "irecv", "batch_isend_irecv")


def main() -> None:
    rank, world, init, trace_dir, result_file = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], \
        sys.argv[5]
    assert world == 4
    failures: list[str] = []

    def check(ok: bool, what: str) -> None:
        if not ok:
            failures.append(what)

    originals = {n: (getattr(dist, n), getattr(dist.distributed_c10d, n)) for n in WRAPPED}
    trace.install(trace_dir)  # before the process group: the file opens at the first call
    check(all(getattr(dist, n) is not originals[n][0] for n in WRAPPED), "install wrapped torch.distributed")
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world)
    tp_groups = [dist.new_group([0, 1]), dist.new_group([2, 3])]
    pp_groups = [dist.new_group([0, 2]), dist.new_group([1, 3])]
    tp, other_tp, pp = tp_groups[rank // 2], tp_groups[1 - rank // 2], pp_groups[rank % 2]
    tp_ranks, pp_ranks = [rank // 2 * 2, rank // 2 * 2 + 1], [rank % 2, rank % 2 + 2]
    tp_local, pp_local = tp_ranks.index(rank), pp_ranks.index(rank)

    def unsupported() -> dict[str, str]:
        """The calls gloo refuses, and what it says for each."""
        calls = {
            "all_reduce avg": lambda: dist.all_reduce(torch.ones(13), op=dist.ReduceOp.AVG),
            "all_gather_into_tensor": lambda: dist.all_gather_into_tensor(torch.empty(4 * 17), torch.ones(17)),
            "_all_gather_base": lambda: dist._all_gather_base(torch.empty(4 * 19, dtype=torch.float16),
                                                              torch.ones(19, dtype=torch.float16)),
            "reduce_scatter": lambda: dist.reduce_scatter(torch.empty(2, 5), [torch.ones(2, 5) for _ in range(4)]),
            "reduce_scatter_tensor": lambda: dist.reduce_scatter_tensor(torch.empty(3), torch.ones(12),
                                                                        op=dist.ReduceOp.MAX),
            "_reduce_scatter_base": lambda: dist._reduce_scatter_base(torch.empty(2, dtype=torch.float64),
                                                                      torch.ones(8, dtype=torch.float64)),
            "all_to_all": lambda: dist.all_to_all([torch.empty(j + 1, 3) for j in range(4)],
                                                  [torch.ones(j + 1, 3) for j in range(4)]),
        }
        said = {}
        for name, call in calls.items():
            try:
                call()
                said[name] = "ran"
            except RuntimeError as e:
                said[name] = str(e)
        return said

    # all_reduce: each reduction, the world and both kinds of sub-group.
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3) + rank
    with trace.tag("layer 0 entry"):
        check(dist.all_reduce(x) is None, "all_reduce returns None")
    check(torch.equal(x, 4 * torch.arange(6, dtype=torch.float32).reshape(2, 3) + 6), "all_reduce sum")
    y = torch.full((5,), rank, dtype=torch.int64)
    dist.all_reduce(y, op=dist.ReduceOp.MAX, group=tp)
    check(torch.equal(y, torch.full((5,), tp_ranks[1], dtype=torch.int64)), "all_reduce max over tp")
    z = torch.full((7,), float(rank + 1), dtype=torch.float64)
    dist.all_reduce(z, op=dist.ReduceOp.MIN, group=pp)
    check(torch.equal(z, torch.full((7,), float(pp_ranks[0] + 1), dtype=torch.float64)), "all_reduce min over pp")
    w = torch.full((1, 1, 11), 2, dtype=torch.int32)
    dist.all_reduce(w, op=dist.ReduceOp.PRODUCT)
    check(torch.equal(w, torch.full((1, 1, 11), 16, dtype=torch.int32)), "all_reduce product")

    # all_gather (list): this rank's part.
    trace.set_tag("gather")
    parts = [torch.empty(3, 2) for _ in range(2)]
    dist.all_gather(parts, torch.full((3, 2), float(rank)), group=tp)
    check(all(torch.equal(p, torch.full((3, 2), float(r))) for p, r in zip(parts, tp_ranks)), "all_gather over tp")
    trace.set_tag(None)

    # What gloo refuses: written, then the same error as without the hook.
    traced_errors = unsupported()

    # all_to_all_single: even splits over the world, uneven over tp.
    a2a_in = torch.arange(16, dtype=torch.float32).reshape(8, 2) + 100 * rank
    a2a_out = torch.empty(8, 2)
    dist.all_to_all_single(a2a_out, a2a_in)
    check(all(torch.equal(a2a_out[2 * j:2 * j + 2], torch.arange(16, dtype=torch.float32).reshape(8, 2)
                          [2 * rank:2 * rank + 2] + 100 * j) for j in range(4)), "all_to_all_single over the world")
    splits_in = [1, 2] if tp_local == 0 else [2, 1]
    splits_out = [1, 2] if tp_local == 0 else [2, 1]
    mine = torch.arange(3, dtype=torch.int64) + 10 * rank
    got = torch.empty(3, dtype=torch.int64)
    dist.all_to_all_single(got, mine, splits_out, splits_in, group=tp)
    a, b = (torch.arange(3, dtype=torch.int64) + 10 * r for r in tp_ranks)
    want = torch.cat([a[:1], b[:2]]) if tp_local == 0 else torch.cat([a[1:], b[2:]])
    check(torch.equal(got, want), "all_to_all_single with splits over tp")

    # broadcast and reduce: the root is a global rank.
    bc = torch.full((23,), float(rank))
    dist.broadcast(bc, src=1)
    check(torch.equal(bc, torch.full((23,), 1.0)), "broadcast from 1")
    bc2 = torch.full((2, 29), rank, dtype=torch.uint8)
    dist.broadcast(bc2, src=tp_ranks[1], group=tp)
    check(torch.equal(bc2, torch.full((2, 29), tp_ranks[1], dtype=torch.uint8)), "broadcast over tp")
    rd = torch.full((31,), float(rank))
    dist.reduce(rd, dst=2, op=dist.ReduceOp.MAX)
    check(rank != 2 or torch.equal(rd, torch.full((31,), 3.0)), "reduce max to 2")

    # send and recv: over the world, then over pp with a tag.
    if rank < 2:
        check(dist.send(torch.full((37,), float(rank)), dst=rank + 2) is None, "send returns None")
    else:
        buf = torch.empty(37)
        check(dist.recv(buf, src=rank - 2) == rank - 2, "recv returns its source")
        check(torch.equal(buf, torch.full((37,), float(rank - 2))), "recv's message")
    with trace.tag("pp boundary"):
        if pp_local == 0:
            dist.send(torch.full((4, 41), rank, dtype=torch.int32), dst=pp_ranks[1], group=pp)
        else:
            buf = torch.empty(4, 41, dtype=torch.int32)
            dist.recv(buf, src=pp_ranks[0], group=pp)
            check(torch.equal(buf, torch.full((4, 41), pp_ranks[0], dtype=torch.int32)), "recv over pp")
    # A recv from any source: written when it returns, with the rank it came from.
    if tp_local == 0:
        dist.send(torch.full((43,), float(rank)), dst=tp_ranks[1])
    else:
        buf = torch.empty(43)
        check(dist.recv(buf) == tp_ranks[0], "recv from any source returns its source")

    # isend and irecv under nested tags; all_reduce under the outer one.
    with trace.tag("outer"):
        with trace.tag("inner"):
            if tp_local == 0:
                work = dist.isend(torch.full((47,), float(rank), dtype=torch.float64), dst=tp_ranks[1])
            else:
                buf = torch.empty(47, dtype=torch.float64)
                work = dist.irecv(buf, src=tp_ranks[0])
            check(work is not None, "isend/irecv return their work")
            work.wait()
            check(tp_local == 0 or torch.equal(buf, torch.full((47,), float(tp_ranks[0]), dtype=torch.float64)),
                  "irecv's message")
        ones = torch.ones(53)
        dist.all_reduce(ones, group=tp)
        check(torch.equal(ones, torch.full((53,), 2.0)), "all_reduce over tp under a tag")
    check(trace.get_tag() == "", "the tag is gone after its block")

    # batch_isend_irecv over tp: a line for each P2POp.
    peer = tp_ranks[1 - tp_local]
    got = torch.empty(59)
    ops = [dist.P2POp(dist.isend, torch.full((59,), float(rank)), peer, group=tp),
           dist.P2POp(dist.irecv, got, peer, group=tp)]
    reqs = dist.batch_isend_irecv(ops)
    check(len(reqs) == 2, "batch_isend_irecv returns a work per op")
    for r in reqs:
        r.wait()
    check(torch.equal(got, torch.full((59,), float(peer))), "batch_isend_irecv's message")

    # A group this rank is not in: torch runs nothing, nothing is written.
    check(dist.all_reduce(torch.ones(61), group=other_tp) is None, "a call on another group returns None")

    # uninstall: torch's own functions back, nothing written, the same errors.
    trace.uninstall()
    check(all((getattr(dist, n), getattr(dist.distributed_c10d, n)) == originals[n] for n in WRAPPED),
          "uninstall restored every function")
    dist.all_reduce(torch.ones(67))
    untraced_errors = unsupported()
    check(traced_errors == untraced_errors, f"errors with the hook {traced_errors} != without {untraced_errors}")
    check(all(e != "ran" for e in traced_errors.values()), f"gloo ran a call it was taken to refuse: {traced_errors}")
    dist.barrier()

    with open(result_file + ".part", "w") as f:
        json.dump({"failures": failures, "errors": traced_errors}, f)
    os.rename(result_file + ".part", result_file)

    # Traced again: rank 0 waits for a message rank 1 never sends.
    trace.install(os.path.join(trace_dir, "hang", "rank-{rank}.jsonl"))
    if rank == 0:
        dist.recv(torch.empty(71), src=1)
    time.sleep(120)


if __name__ == "__main__":
    main()
