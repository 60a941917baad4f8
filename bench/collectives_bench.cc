// The collectives of the MPI backend against MPI's own, in the style of
// nccl-tests. Run under mpirun:
//
//   mpirun -np 8 build/bench/bench_collectives [--min-bytes 1024] [--max-bytes 67108864]
//
// For each collective and size: the median and the 90th percentile of a
// call's time over the timed iterations (after warm-up; each call's time is
// its slowest rank's; each call timed alone from a barrier, so building an
// all-to-all's per-member arguments is not counted). Both sides allocate
// their output in every call, as seam's collectives return a new tensor.
// Then the algorithm bandwidth (size / median time)
// and the bus bandwidth (algbw x 2(n-1)/n for all-reduce, x (n-1)/n for
// reduce-scatter, all-gather and all-to-all), for seam's canonical
// collectives (point-to-point exchanges and the canonical tree) and MPI's
// own, and the ratio canonical / native of bus bandwidth at the medians. An untimed pass
// first checks every result and counts the wrong elements: canonical sums
// bit for bit against the canonical tree, MPI's within a relative 1e-5.
//
// Size is the whole buffer, as nccl-tests counts it: the all-reduce's
// buffer, the reduce-scatter's input, the all-gather's output, each rank's
// all-to-all input.
#include <fmt/format.h>
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "seam/runtime/gemm.h"
#include "seam/runtime/mpi.h"

namespace seam {
namespace {

enum class Op { kAllReduce, kReduceScatter, kAllGather, kAllToAll };
constexpr Op kOps[] = {Op::kAllReduce, Op::kReduceScatter, Op::kAllGather, Op::kAllToAll};

std::string_view Name(Op op) {
  switch (op) {
    case Op::kAllReduce: return "all-reduce";
    case Op::kReduceScatter: return "reduce-scatter";
    case Op::kAllGather: return "all-gather";
    case Op::kAllToAll: return "all-to-all";
  }
  return "?";
}

double BusFactor(Op op, int n) { return (op == Op::kAllReduce ? 2.0 : 1.0) * (n - 1) / n; }

// A distinct value for every (rank, element), exact in fp32.
float ValueOf(int rank, int64_t i) { return static_cast<float>(rank + 1) + static_cast<float>(i % 4093) / 4096.0f; }

Tensor Input(int rank, int64_t count) {
  Tensor t(static_cast<int>(count), 1);
  for (int64_t i = 0; i < count; ++i) t.data()[i] = ValueOf(rank, i);
  return t;
}

// One call from a common start (the barrier), so no rank's time includes
// waiting for another that was still preparing.
template <class Call>
double Seconds(Call call) {
  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = std::chrono::steady_clock::now();
  call();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// One collective of `bytes` on the whole world, one way or the other.
class Runner {
 public:
  Runner(const MpiProcess& p, Comm& canonical, int64_t bytes, Op op)
      : p_(p), comm_(canonical), n_(p.size()), op_(op), count_(bytes / 4), group_(AllRanks(n_)) {
    in_ = Input(p.rank(), op == Op::kAllGather ? count_ / n_ : count_);
    out_count_ = static_cast<size_t>(op == Op::kReduceScatter ? count_ / n_ : count_);
    spans_ = EvenSpans(static_cast<int>(count_), n_);
  }

  // The arguments a call consumes (an all-to-all's per-member tensors), made
  // before the call so its time is the collective's alone.
  void Prepare() {
    if (op_ != Op::kAllToAll) return;
    to_each_.clear();
    for (const RowSpan& s : spans_) to_each_.push_back(in_.RowRange(s.begin, s.end));
  }

  // The collective; the result as one tensor in member order.
  Tensor Canonical() {
    switch (op_) {
      case Op::kAllReduce: return comm_.AllReduce(group_, in_);
      case Op::kReduceScatter: return comm_.ReduceScatter(group_, in_, spans_);
      case Op::kAllGather: return comm_.AllGather(group_, in_, std::vector<int>(static_cast<size_t>(n_), in_.rows()));
      case Op::kAllToAll: return ConcatRows(comm_.AllToAll(group_, std::move(to_each_)));
    }
    return {};
  }

  // The collective alone, timed (the all-to-all's parts are not joined).
  double TimedCanonical() {
    Prepare();
    return Seconds([&] {
      if (op_ == Op::kAllToAll) {
        comm_.AllToAll(group_, std::move(to_each_));
      } else {
        Canonical();
      }
    });
  }

  // MPI's own collective into an output it allocates, as the canonical one does.
  std::vector<float> Native() {
    std::vector<float> out(out_count_);
    const int c = static_cast<int>(count_), part = static_cast<int>(count_ / n_);
    switch (op_) {
      case Op::kAllReduce: MPI_Allreduce(in_.data(), out.data(), c, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
      case Op::kReduceScatter:
        MPI_Reduce_scatter_block(in_.data(), out.data(), part, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        break;
      case Op::kAllGather:
        MPI_Allgather(in_.data(), part, MPI_FLOAT, out.data(), part, MPI_FLOAT, MPI_COMM_WORLD);
        break;
      case Op::kAllToAll: MPI_Alltoall(in_.data(), part, MPI_FLOAT, out.data(), part, MPI_FLOAT, MPI_COMM_WORLD); break;
    }
    return out;
  }

  // What this rank should hold afterwards: sums as the canonical tree makes them.
  std::vector<float> Expected() const {
    std::vector<Tensor> all;
    for (int r = 0; r < n_; ++r) all.push_back(Input(r, op_ == Op::kAllGather ? count_ / n_ : count_));
    const RowSpan mine = spans_[static_cast<size_t>(p_.rank())];
    Tensor out;
    switch (op_) {
      case Op::kAllReduce: out = TreeSum(all); break;
      case Op::kReduceScatter: out = TreeSum(all).RowRange(mine.begin, mine.end); break;
      case Op::kAllGather: out = ConcatRows(all); break;
      case Op::kAllToAll: {
        std::vector<Tensor> parts;
        for (const Tensor& t : all) parts.push_back(t.RowRange(mine.begin, mine.end));
        out = ConcatRows(parts);
        break;
      }
    }
    return {out.data(), out.data() + out.size()};
  }

  bool sums() const { return op_ == Op::kAllReduce || op_ == Op::kReduceScatter; }

 private:
  static RankGroup AllRanks(int n) {
    RankGroup g;
    for (int r = 0; r < n; ++r) g.ranks.push_back(r);
    return g;
  }

  const MpiProcess& p_;
  Comm& comm_;
  int n_;
  Op op_;
  int64_t count_;
  RankGroup group_;
  Tensor in_;
  size_t out_count_ = 0;
  std::vector<RowSpan> spans_;
  std::vector<Tensor> to_each_;
};

int64_t Wrong(const std::vector<float>& got, const std::vector<float>& want, bool exact) {
  if (got.size() != want.size()) return static_cast<int64_t>(std::max(got.size(), want.size()));
  int64_t wrong = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const bool ok = exact ? got[i] == want[i] : std::fabs(got[i] - want[i]) <= 1e-5f * std::fabs(want[i]);
    wrong += ok ? 0 : 1;
  }
  return wrong;
}

int64_t SumOverRanks(int64_t v) {
  int64_t total = 0;
  MPI_Allreduce(&v, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  return total;
}

// A call's time: the median and the 90th percentile over the timed calls,
// each call's time its slowest rank's.
struct Measured {
  double median = 0;
  double p90 = 0;
  int64_t wrong = 0;
};

Measured Percentiles(std::vector<double> mine) {
  std::vector<double> slowest(mine.size());
  MPI_Allreduce(mine.data(), slowest.data(), static_cast<int>(mine.size()), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  std::sort(slowest.begin(), slowest.end());
  return {.median = slowest[slowest.size() / 2], .p90 = slowest[slowest.size() * 9 / 10]};
}

// Each of two ways timed over `iters` calls after `warmup`. The calls
// alternate, so a drift in the machine's load falls on both alike. Each
// call returns the seconds of its collective.
template <class A, class B>
std::pair<Measured, Measured> TimeBoth(int warmup, int iters, A a, B b) {
  for (int i = 0; i < warmup; ++i) {
    a();
    b();
  }
  std::vector<double> times[2];
  for (int i = 0; i < iters; ++i) {
    times[0].push_back(a());
    times[1].push_back(b());
  }
  return {Percentiles(times[0]), Percentiles(times[1])};
}

int Main(int argc, char** argv) {
  int64_t min_bytes = 1 << 10, max_bytes = 64 << 20;
  int warmup = 3;
  CLI::App app{"seam's MPI collectives against MPI's own (run under mpirun)"};
  app.add_option("--min-bytes", min_bytes, "smallest size")->capture_default_str();
  app.add_option("--max-bytes", max_bytes, "largest size (sizes grow 4x)")->capture_default_str();
  app.add_option("--warmup", warmup, "untimed calls before the timed ones")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  const MpiProcess p(&argc, &argv);
  const int n = p.size();
  std::unique_ptr<Comm> comm = MakeMpiComm(p, {.tp = n}, {.mode = MpiMode::kCanonical});
  if (p.root()) {
    fmt::print(
        "# seam collectives on {} ranks: canonical (point-to-point exchanges + the canonical tree) vs native "
        "(MPI's own)\n",
        n);
    fmt::print(
        "# time in us per call (slowest rank): median and 90th percentile of the timed calls; algbw, busbw in "
        "GB/s at the median; #wrong from a separate untimed pass\n");
    fmt::print("{:>10} {:>15} | {:>10} {:>10} {:>7} {:>7} {:>6} | {:>10} {:>10} {:>7} {:>7} {:>6} | {:>6}\n", "size",
               "collective", "canon us", "p90 us", "algbw", "busbw", "#wrong", "native us", "p90 us", "algbw", "busbw",
               "#wrong", "ratio");
  }
  std::map<std::string, double> worst_ratio;  // per collective, at 1 MiB and above
  for (Op op : kOps) {
    for (int64_t bytes = min_bytes; bytes <= max_bytes; bytes *= 4) {
      if (bytes / 4 % n != 0) continue;
      Runner run(p, *comm, bytes, op);
      const std::vector<float> want = run.Expected();
      run.Prepare();
      const Tensor canonical_out = run.Canonical();
      const std::vector<float> got(canonical_out.data(), canonical_out.data() + canonical_out.size());
      const int64_t canonical_wrong = SumOverRanks(Wrong(got, want, true));
      const int64_t native_wrong = SumOverRanks(Wrong(run.Native(), want, !run.sums()));
      const int iters = static_cast<int>(std::clamp<int64_t>((int64_t{256} << 20) / bytes, 11, 200));
      auto [canonical, native] = TimeBoth(
          warmup, iters, [&] { return run.TimedCanonical(); }, [&] { return Seconds([&] { run.Native(); }); });
      canonical.wrong = canonical_wrong;
      native.wrong = native_wrong;
      const double factor = BusFactor(op, n);
      const double c_alg = static_cast<double>(bytes) / canonical.median / 1e9;
      const double n_alg = static_cast<double>(bytes) / native.median / 1e9;
      const double ratio = c_alg / n_alg;
      if (bytes >= (1 << 20)) {
        auto [it, fresh] = worst_ratio.emplace(std::string(Name(op)), ratio);
        if (!fresh) it->second = std::min(it->second, ratio);
      }
      if (p.root()) {
        fmt::print(
            "{:>10} {:>15} | {:>10.1f} {:>10.1f} {:>7.2f} {:>7.2f} {:>6} | {:>10.1f} {:>10.1f} {:>7.2f} {:>7.2f} "
            "{:>6} | {:>6.2f}\n",
            bytes, Name(op), canonical.median * 1e6, canonical.p90 * 1e6, c_alg, c_alg * factor, canonical.wrong,
            native.median * 1e6, native.p90 * 1e6, n_alg, n_alg * factor, native.wrong, ratio);
      }
    }
  }
  if (p.root()) {
    fmt::print("# canonical / native bus bandwidth, worst at 1 MiB and above:");
    for (const auto& [name, ratio] : worst_ratio) fmt::print(" {} {:.2f};", name, ratio);
    fmt::print("\n");
  }
  return 0;
}

}  // namespace
}  // namespace seam

int main(int argc, char** argv) { return seam::Main(argc, argv); }
