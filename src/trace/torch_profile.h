// What a PyTorch profiler trace calls things (internal to its reader and
// writer): c10's dtype names, c10d's collective names, and the keys
// torch/csrc/profiler/util.h gives a record_param_comms event's args.
#pragma once

#include <array>
#include <string_view>
#include <utility>

#include "seam/trace.h"

namespace seam::torch_profile {

// c10::toString(ScalarType) beside torch's Python name, for the dtypes a
// seam trace knows.
inline constexpr std::array<std::pair<std::string_view, std::string_view>, 11> kDtypes = {{
    {"BFloat16", "bfloat16"},
    {"Half", "float16"},
    {"Float", "float32"},
    {"Double", "float64"},
    {"Float8_e4m3fn", "float8_e4m3fn"},
    {"Float8_e5m2", "float8_e5m2"},
    {"Char", "int8"},
    {"Byte", "uint8"},
    {"Int", "int32"},
    {"Long", "int64"},
    {"Bool", "bool"},
}};

// The collective names ProcessGroupNCCL records, each with the seam op it
// is. For every one of them "In msg nelems" is what seam counts as the
// event's elements: the buffer (all-reduce, broadcast, reduce, send, recv),
// this rank's part (all-gather: the input), the whole input (reduce-scatter:
// the list form records the output's numel times the group size), all this
// rank sends (all-to-all); a coalesced call, the sum over its tensors.
// (_broadcast_oop and _reduce_oop are the pieces c10d runs an all-gather or
// reduce-scatter of uneven parts with, each recorded inside the outer
// call's event, "Rank" the caller's own and the root not recorded: a reader
// counts the outer call only, and has no root to give one alone.)
struct Collective {
  std::string_view name;
  TraceOp op;
};
inline constexpr std::array<Collective, 14> kCollectives = {{
    {"allreduce", TraceOp::kAllReduce},
    {"allreduce_coalesced", TraceOp::kAllReduce},
    {"all_gather", TraceOp::kAllGather},
    {"_allgather_base", TraceOp::kAllGather},
    {"allgather_into_tensor_coalesced", TraceOp::kAllGather},
    {"reduce_scatter", TraceOp::kReduceScatter},
    {"_reduce_scatter_base", TraceOp::kReduceScatter},
    {"reduce_scatter_tensor_coalesced", TraceOp::kReduceScatter},
    {"all_to_all", TraceOp::kAllToAll},
    {"all_to_allv", TraceOp::kAllToAll},
    {"broadcast", TraceOp::kBroadcast},
    {"reduce", TraceOp::kReduce},
    {"send", TraceOp::kSend},
    {"recv", TraceOp::kRecv},
}};

// The names c10d records that move none of the model's data: a process
// group's creation ("init", no elements), a wait on an earlier call's work
// ("wait", no elements) and a barrier (a one-byte all-reduce of its own). A
// reader passes over them.
inline constexpr std::array<std::string_view, 3> kNotData = {"init", "wait", "barrier"};

// The CPU op c10d's RECORD_PARAM_COMMS macros open around each call.
inline constexpr std::string_view kParamComms = "record_param_comms";

}  // namespace seam::torch_profile
