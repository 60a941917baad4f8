// `seam run --backend mpi`: every process of an mpirun job is one rank. Each
// prepares the run itself; the ranks agree the setup went well (or name the
// rank where it did not) before any collective; rank 0 gathers the output,
// runs the reference and prints.
#include <fmt/format.h>

#include "cli.h"

#ifdef SEAM_HAVE_MPI
#include "seam/runtime/mpi.h"
#elif defined(SEAM_MPI_BESIDE)
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#endif

namespace seam::cli {

#if defined(SEAM_MPI_BESIDE) && !defined(SEAM_HAVE_MPI)

// `seam` itself links no MPI, so the planner's commands and threaded runs
// start without loading OpenMPI's libraries (most of a plan's time). A run
// on MPI becomes seam-mpi, the same command built with MPI beside it: exec
// keeps the process, its environment and what mpirun knows of it.
int RunOnMpi(const RunArgs& a, const ParallelConfig&) {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::filesystem::path program = self.parent_path() / SEAM_MPI_BESIDE;
  if (!ec) {
    std::vector<char*> argv;
    for (const std::string& word : a.command_line) argv.push_back(const_cast<char*>(word.c_str()));
    argv.push_back(nullptr);
    execv(program.c_str(), argv.data());
  }
  return Fail(
      InvalidArgument(fmt::format("--backend mpi runs {}, which could not be started ({}); it is built and "
                                  "installed beside seam when OpenMPI is found (libopenmpi-dev)",
                                  program.string(), std::strerror(ec ? ec.value() : errno))));
}

#elif !defined(SEAM_HAVE_MPI)

int RunOnMpi(const RunArgs&, const ParallelConfig&) {
  return Fail(
      InvalidArgument("this seam was built without MPI: ./scripts/build installs OpenMPI (libopenmpi-dev, "
                      "openmpi-bin) with the rest of what the suite needs and rebuilds with it"));
}

#else

namespace {

Expected<MpiOptions> OptionsOf(const RunArgs& a) {
  MpiOptions o{.mode = a.mpi_mode.value_or(MpiMode::kCanonical),
               .timeout_seconds = a.timeout,
               .fault = a.fault.value_or(Fault{})};
  if (!(a.timeout > 0)) return InvalidArgument(fmt::format("--timeout {} must be above 0 seconds", a.timeout));
  return o;
}

// The setup of this rank, with the injected bad input where asked for.
Expected<PreparedRun> Setup(const RunArgs& a, const ParallelConfig& cfg, const MpiOptions& o, int rank) {
  if (o.fault.kind == FaultKind::kInput && o.fault.rank == rank) {
    return InvalidArgument("bad input on this rank (injected by --fault)");
  }
  return PrepareRun(a, cfg);
}

// A generation's flags and each request's lengths, which every rank must share.
std::string GenerationDigest(const RunArgs& a) {
  if (a.generate == 0) return "";
  std::string out = fmt::format(" generate={} chunk={} mixed={}", a.generate, a.chunk, a.mixed ? "yes" : "no");
  for (const RequestLengths& l : a.lengths) out += fmt::format(" {}:{}@{}", l.prompt, l.output, l.arrival);
  return out;
}

// What every rank must share to run one job: the model, the configuration,
// the dtype, the seed and the batch, as words a user can compare.
std::string Digest(const RunArgs& a, const ParallelConfig& cfg, const PreparedRun& p) {
  const Model& m = p.loaded.model;
  size_t batch = 0;
  for (const auto& r : p.batch.requests) {
    for (int id : r) batch = batch * 1000003u + static_cast<size_t>(id) + 1;
  }
  // Every flag that changes what a rank does or what the run leaves behind:
  // rank 0 alone writes a dump, but a rank bound unfused runs other steps.
  return fmt::format(
      "'{} ({} layers, hidden {}) {} dtype={} seed={} {} tokens in {} requests (batch hash {:x}) "
      "mpi-mode={} timeout={:g} unfused={} dump={}{}{}'",
      m.name, m.num_layers, m.hidden, Describe(cfg), Name(p.dtype), a.seed, p.batch.tokens(), p.batch.requests.size(),
      batch, Name(a.mpi_mode.value_or(MpiMode::kCanonical)), a.timeout, a.unfused ? "yes" : "no",
      a.dump.empty() ? "-" : a.dump, a.force ? " --force" : "", GenerationDigest(a));
}

}  // namespace

int RunOnMpi(const RunArgs& a, const ParallelConfig& cfg) {
  const MpiProcess mpi(nullptr, nullptr, a.timeout > 0 ? a.timeout : 0);
  // Only rank 0 prints what every rank finds; an error of some ranks only
  // names the first of them.
  const auto fail = [&](const Error& e) { return mpi.root() ? Fail(e) : ExitCodeOf(e); };
  Expected<MpiOptions> options = OptionsOf(a);
  if (!options) return fail(options.error());
  Expected<PreparedRun> p = Setup(a, cfg, *options, mpi.rank());
  if (Status s = mpi.Agree(p.status(), options->timeout_seconds); !s.ok()) return fail(s.error());
  if (Status s = mpi.AgreeOn("the run", Digest(a, cfg, *p), options->timeout_seconds); !s.ok()) return fail(s.error());
  if (a.generate > 0) {
    const std::vector<Request> requests = RequestsOf(a, p->batch);
    Expected<Generation> g =
        GenerateOnMpi(mpi, p->loaded.model, p->plans, p->loaded.weights, requests, {.chunk = a.chunk, .mixed = a.mixed},
                      {.dtype = p->dtype, .timeout_seconds = a.timeout}, *options);
    if (!g) return fail(g.error());
    if (!mpi.root()) return kOk;
    return ReportGeneration(a, cfg, *p, requests, *g, "mpi (canonical)");
  }
  Expected<RunOutput> out = RunPlansOnMpi(mpi, p->loaded.model, p->plans, p->loaded.weights, p->batch,
                                          {.dtype = p->dtype, .timeout_seconds = a.timeout}, *options);
  if (!out) return fail(out.error());
  if (!mpi.root()) return kOk;
  RunCheck check{.backend = fmt::format("mpi ({})", Name(options->mode))};
  if (options->mode == MpiMode::kNative) {
    check.tolerance = p->dtype == Dtype::kF32 ? 1e-4 : 0.1;
    check.why_tolerance = "MPI's own collectives sum in their own order";
  }
  return ReportRun(a, cfg, *p, *out, check);
}

#endif

}  // namespace seam::cli
