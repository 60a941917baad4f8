// One rank's collectives written as torch.profiler (record_shapes=True)
// exports a PyTorch run on NCCL: a record_param_comms CPU event a call with
// the args c10d gives it, the NCCL kernel it launched with the args Kineto
// copies onto it, and the distributedInfo torch.profiler adds. Every number
// and name is a function of the events: the same events write the same text.
#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>

#include "seam/limits.h"
#include "seam/trace.h"
#include "trace/torch_profile.h"

namespace seam {
namespace {

using ojson = nlohmann::ordered_json;

constexpr size_t kListedRanks = 30;  // PyTorch cuts a longer list of ranks

// A group as c10d describes it.
struct Group {
  std::vector<int> ranks;
  std::string name;  // "Process Group Name"
  std::string desc;  // "Process Group Description"
  int stride = -1;   // ProcessGroupNCCL's globalRankStride: the step between its ranks, or -1
  int stream = 0;    // the NCCL stream its kernels run on
};

// 0 for one rank, the step for ranks evenly apart, else -1.
int StrideOf(const std::vector<int>& ranks) {
  if (ranks.size() < 2) return 0;
  const int step = ranks[1] - ranks[0];
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] != ranks[0] + static_cast<int>(i) * step) return -1;
  }
  return step;
}

// A name the same on every rank that writes the group: "0" for the world
// (PyTorch's default group), else a hash of the ranks in order, as PyTorch
// names a group it hashes.
std::string NameOf(const std::vector<int>& ranks) {
  uint64_t h = 14695981039346656037ULL;  // FNV-1a
  for (char c : fmt::format("{}", fmt::join(ranks, "_"))) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return fmt::format("{:016x}", h);
}

class Groups {
 public:
  explicit Groups(int world_size) {
    std::vector<int> world;
    for (int r = 0; r < world_size; ++r) world.push_back(r);
    Add(world, "0", "default_pg");
  }
  const Group& Of(const std::vector<int>& ranks) {
    const auto it = index_.find(ranks);
    return it != index_.end() ? groups_[it->second] : Add(ranks, NameOf(ranks), "undefined");
  }
  const std::vector<Group>& all() const { return groups_; }

 private:
  const Group& Add(const std::vector<int>& ranks, std::string name, std::string desc) {
    index_.emplace(ranks, groups_.size());
    groups_.push_back(
        {ranks, std::move(name), std::move(desc), StrideOf(ranks), 60 + static_cast<int>(groups_.size())});
    return groups_.back();
  }
  std::vector<Group> groups_;
  std::map<std::vector<int>, size_t> index_;
};

int IndexOf(const std::vector<int>& group, int rank) {
  for (size_t i = 0; i < group.size(); ++i) {
    if (group[i] == rank) return static_cast<int>(i);
  }
  return -1;
}

// The name c10d records for the call seam's op stands for.
std::string_view CollectiveName(TraceOp op) {
  switch (op) {
    case TraceOp::kAllReduce: return "allreduce";
    case TraceOp::kAllGather: return "_allgather_base";
    case TraceOp::kReduceScatter: return "_reduce_scatter_base";
    case TraceOp::kAllToAll: return "all_to_allv";
    case TraceOp::kBroadcast: return "broadcast";
    case TraceOp::kReduce: return "reduce";
    case TraceOp::kSend: return "send";
    case TraceOp::kRecv: return "recv";
  }
  return "";
}

std::string C10Dtype(const std::string& dtype) {
  for (const auto& [c10, torch] : torch_profile::kDtypes) {
    if (dtype == torch) return std::string(c10);
  }
  return dtype;
}

// The dtype as NCCL's kernel names spell it; its reducing kernels take the
// unsigned type for a signed one.
std::string_view NcclType(const std::string& dtype) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 11> kTypes = {{
      {"bfloat16", "bf16"},
      {"float16", "f16"},
      {"float32", "f32"},
      {"float64", "f64"},
      {"float8_e4m3fn", "f8e4m3"},
      {"float8_e5m2", "f8e5m2"},
      {"int8", "u8"},
      {"uint8", "u8"},
      {"int32", "u32"},
      {"int64", "u64"},
      {"bool", "u8"},
  }};
  for (const auto& [torch, nccl] : kTypes) {
    if (dtype == torch) return nccl;
  }
  return "u8";
}

// The kernel NCCL 2.22 and later launches for the call (only a few
// kernels exist; the name says nothing reliable of the reduction).
std::string KernelName(const TraceEvent& e) {
  std::string_view kernel;
  switch (e.op) {
    case TraceOp::kAllReduce: kernel = "AllReduce_Sum_{}_RING_LL"; break;
    case TraceOp::kReduceScatter: kernel = "ReduceScatter_Sum_{}_RING_LL"; break;
    case TraceOp::kReduce: kernel = "Reduce_Sum_{}_RING_LL"; break;
    case TraceOp::kAllGather: kernel = "AllGather_RING_LL"; break;
    case TraceOp::kBroadcast: kernel = "Broadcast_RING_LL"; break;
    default: kernel = "SendRecv"; break;
  }
  return fmt::format("ncclDevKernel_{}(ncclDevKernelArgsStorage<4096ul>)",
                     fmt::format(fmt::runtime(kernel), NcclType(e.dtype)));
}

// "Process Group Ranks" as PyTorch formats it: the ranks only of a group a
// stride above 0 apart, a list of more than 30 cut to its first 29 and last.
std::string ListedRanks(const Group& g) {
  if (g.stride <= 0) return "[]";
  if (g.ranks.size() <= kListedRanks) return fmt::format("[{}]", fmt::join(g.ranks, ", "));
  return fmt::format("[{}, ..., {}]", fmt::join(g.ranks.begin(), g.ranks.begin() + kListedRanks - 1, ", "),
                     g.ranks.back());
}

// "Out msg nelems": an all-gather's whole output, a reduce-scatter's part.
int64_t OutElements(const TraceEvent& e) {
  const auto size = static_cast<int64_t>(e.group.size());
  if (e.op == TraceOp::kAllGather) return e.elements * size;
  if (e.op == TraceOp::kReduceScatter && size > 0) return e.elements / size;
  return e.elements;
}

// The rank c10d passes: the caller's own in the group, a root's, or the
// other end's.
int RecordedRank(const TraceEvent& e, int rank) {
  const bool other =
      e.op == TraceOp::kBroadcast || e.op == TraceOp::kReduce || e.op == TraceOp::kSend || e.op == TraceOp::kRecv;
  return IndexOf(e.group, other ? e.peer : rank);
}

// "Input Dims": the call's inputs, first the tensor (a list of one where
// c10d passes a list) and nine more that are not tensors.
ojson InputDims(const TraceEvent& e) {
  const bool listed = e.op == TraceOp::kAllReduce || e.op == TraceOp::kBroadcast || e.op == TraceOp::kReduce ||
                      e.op == TraceOp::kSend || e.op == TraceOp::kRecv;
  ojson dims = ojson::array();
  dims.push_back(listed ? ojson::array({e.shape}) : ojson(e.shape));
  for (int i = 0; i < 9; ++i) dims.push_back(ojson::array());
  return dims;
}

void AddPeer(ojson& args, const TraceEvent& e, const Group& g) {
  // PyTorch names the other end only where it lists the group's ranks.
  if (g.stride <= 0) return;
  if (e.op == TraceOp::kSend) args["Dst Rank"] = e.peer;
  if (e.op == TraceOp::kRecv) args["Src Rank"] = e.peer;
}

// An all-to-all's rows to each member, as c10d records input_split_sizes
// ("[]" for even parts, or none known).
std::string SplitSizes(const TraceEvent& e) {
  if (e.op != TraceOp::kAllToAll || e.splits.empty() || e.shape.empty() || e.shape.front() == 0) return "[]";
  const int64_t row = e.elements / e.shape.front();
  std::vector<int64_t> rows;
  for (int64_t s : e.splits) rows.push_back(row == 0 ? 0 : s / row);
  return fmt::format("[{}]", fmt::join(rows, ", "));
}

ojson CpuOp(const TraceEvent& e, const Group& g, int rank, int64_t id) {
  ojson args;
  args["External id"] = id;
  args["Record function id"] = id;
  args["Input Dims"] = InputDims(e);
  args["Collective name"] = CollectiveName(e.op);
  args["dtype"] = C10Dtype(e.dtype);
  args["In msg nelems"] = e.elements;
  args["Out msg nelems"] = OutElements(e);
  args["In split size"] = SplitSizes(e);
  args["Out split size"] = "[]";
  args["Global rank start"] = g.ranks.empty() ? 0 : g.ranks.front();
  if (g.stride > 0) args["Global rank stride"] = g.stride;
  args["Group size"] = g.ranks.size();
  args["Process Group Name"] = g.name;
  args["Process Group Description"] = g.desc;
  args["Process Group Ranks"] = ListedRanks(g);
  args["Rank"] = RecordedRank(e, rank);
  AddPeer(args, e, g);
  return {{"ph", "X"},          {"cat", "cpu_op"},        {"name", torch_profile::kParamComms},
          {"pid", 1000 + rank}, {"tid", 1000 + rank},     {"ts", 1000 + 100 * id},
          {"dur", 20},          {"args", std::move(args)}};
}

ojson Kernel(const TraceEvent& e, const Group& g, int rank, int64_t id) {
  ojson args;
  args["External id"] = id;
  args["queued"] = 0;
  args["device"] = rank % 8;
  args["context"] = 1;
  args["stream"] = g.stream;
  args["correlation"] = 100000 + id;
  args["registers per thread"] = 96;
  args["shared memory"] = 89296;
  args["blocks per SM"] = 0.222222;
  args["warps per SM"] = 3.777778;
  args["grid"] = {24, 1, 1};
  args["block"] = {544, 1, 1};
  args["est. achieved occupancy %"] = 0;
  args["Collective name"] = CollectiveName(e.op);
  args["In msg nelems"] = e.elements;
  args["Out msg nelems"] = OutElements(e);
  args["Group size"] = g.ranks.size();
  args["dtype"] = C10Dtype(e.dtype);
  args["In split size"] = SplitSizes(e);
  args["Out split size"] = "[]";
  args["Process Group Name"] = g.name;
  args["Process Group Description"] = g.desc;
  args["Process Group Ranks"] = ListedRanks(g);
  AddPeer(args, e, g);
  return {{"ph", "X"},       {"cat", "kernel"},        {"name", KernelName(e)},
          {"pid", rank % 8}, {"tid", g.stream},        {"ts", 1000 + 100 * id + 30},
          {"dur", 40},       {"args", std::move(args)}};
}

ojson DistributedInfo(const Groups& groups, int rank, int world_size) {
  ojson configs = ojson::array();
  for (const Group& g : groups.all()) {
    configs.push_back({{"pg_name", g.name},
                       {"pg_desc", g.desc},
                       {"backend_config", "cuda:nccl"},
                       {"pg_size", g.ranks.size()},
                       {"ranks", g.ranks}});
  }
  return {{"backend", "nccl"},
          {"rank", rank},
          {"world_size", world_size},
          {"pg_count", groups.all().size()},
          {"pg_config", std::move(configs)},
          {"nccl_version", "2.26.2"}};
}

}  // namespace

std::string WriteTorchTrace(const RankTrace& rank, int world_size) {
  SEAM_CHECK(world_size >= 0 && world_size <= kMaxRanks, "a world of more ranks than a trace holds");
  Groups groups(world_size);
  std::vector<std::string> events;
  for (size_t k = 0; k < rank.events.size(); ++k) {
    const TraceEvent& e = rank.events[k];
    const Group& g = groups.Of(e.group);
    const auto id = static_cast<int64_t>(k) + 1;
    events.push_back(CpuOp(e, g, rank.rank, id).dump());
    events.push_back(Kernel(e, g, rank.rank, id).dump());
  }
  return fmt::format("{{\n  \"schemaVersion\": 1,\n  \"distributedInfo\": {},\n  \"traceEvents\": [\n    {}\n  ]\n}}\n",
                     DistributedInfo(groups, rank.rank, world_size).dump(), fmt::join(events, ",\n    "));
}

}  // namespace seam
