// `seam run --backend mpi` under mpirun: one process per rank gives the same
// bits, the same dump and the same per-rank traffic as the threads backend;
// a rank that throws, is killed, stops answering or gets bad input ends the
// whole job, named, in bounded time.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "process_testing.h"

namespace seam {
namespace {

using testing::Quote;
using testing::ReadText;
using testing::Result;

class Mpi : public testing::InTempDir {
 protected:
  Result Seam(const std::vector<std::string>& args) const { return Shell(Quote(SEAM_CLI), args); }

  Result Mpirun(int np, const std::vector<std::string>& args) const { return MpirunOf(np, SEAM_CLI, args); }

  Result MpirunOf(int np, const std::string& program, const std::vector<std::string>& args) const {
    const std::string mpirun = Quote(SEAM_MPIRUN) + " --allow-run-as-root --oversubscribe -np " + std::to_string(np);
    return Shell(mpirun + " " + Quote(program), args);
  }
};

std::vector<std::string> With(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The "  rank N: ..." lines: each rank's collectives and bytes.
std::vector<std::string> RankLines(const std::string& out) {
  std::vector<std::string> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("  rank ", 0) == 0) lines.push_back(line);
  }
  return lines;
}

struct Job {
  std::string name;
  int np = 0;
  std::vector<std::string> args;
};

void PrintTo(const Job& j, std::ostream* os) { *os << j.name; }

class MpiAgainstThreads : public Mpi, public ::testing::WithParamInterface<Job> {};

TEST_P(MpiAgainstThreads, IsBitIdenticalWithTheSameDumpAndTraffic) {
  const Job& job = GetParam();
  const Result threads = Seam(With(job.args, {"--dump", PathOf("threads")}));
  ASSERT_EQ(threads.code, 0) << threads.err;
  const Result mpi = Mpirun(job.np, With(job.args, {"--backend", "mpi", "--dump", PathOf("mpi")}));
  ASSERT_EQ(mpi.code, 0) << mpi.out << mpi.err;
  EXPECT_NE(mpi.out.find("backend=mpi (canonical)"), std::string::npos) << mpi.out;
  EXPECT_NE(mpi.out.find("\nbit-identical: yes\n"), std::string::npos) << mpi.out;
  EXPECT_EQ(RankLines(mpi.out), RankLines(threads.out));
  EXPECT_EQ(RankLines(mpi.out).size(), static_cast<size_t>(job.np));
  // Every file of the dump (llama writes a Hugging Face checkpoint), byte for byte.
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(PathOf("threads"))) {
    const std::string file = entry.path().filename().string();
    EXPECT_TRUE(ReadText(entry.path().string()) == ReadText(PathOf("mpi/" + file))) << file << " differs";
    ++files;
  }
  EXPECT_GE(files, 3);
}

// A generation under attention DP where most groups hold no request in a
// step (four groups, two requests, one arriving later): every rank joins
// every step, and the tokens, the bits and each rank's traffic are the
// threads backend's.
TEST_F(Mpi, ADpAttentionDecodeWithIdleGroupsGeneratesTheThreadsTokensBitForBit) {
  const std::vector<std::string> args = {
      "run",        "deepseek-v2-lite", "--tp",       "4", "--attn-dp", "4", "--moe",  "a2a",
      "--requests", "6:4,3:2@2",        "--generate", "4", "--chunk",   "2", "--mixed"};
  const Result threads = Seam(args);
  ASSERT_EQ(threads.code, 0) << threads.err;
  const Result mpi = Mpirun(4, With(args, {"--backend", "mpi"}));
  ASSERT_EQ(mpi.code, 0) << mpi.out << mpi.err;
  EXPECT_NE(mpi.out.find("backend=mpi (canonical)"), std::string::npos) << mpi.out;
  EXPECT_NE(mpi.out.find("a DP group idle in 15 of them"), std::string::npos) << mpi.out;
  EXPECT_NE(mpi.out.find("\nbit-identical: yes\n"), std::string::npos) << mpi.out;
  const auto lines = [](const std::string& out, const std::string& start) {
    std::vector<std::string> found;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind(start, 0) == 0) found.push_back(line);
    }
    return found;
  };
  EXPECT_EQ(lines(mpi.out, "  request "), lines(threads.out, "  request "));
  EXPECT_EQ(lines(mpi.out, "  request ").size(), 2u);
  EXPECT_EQ(RankLines(mpi.out), RankLines(threads.out));
}

INSTANTIATE_TEST_SUITE_P(
    Jobs, MpiAgainstThreads,
    ::testing::Values(
        Job{"dense_np4", 4, {"run", "llama", "--tp", "2", "--pp", "2"}},
        Job{"moe_np4", 4, {"run", "qwen3-moe", "--tp", "2", "--moe", "a2a", "--pp", "2", "--dtype", "bf16"}},
        Job{"mixers_np4", 4, {"run", "nemotron-h", "--tp", "2", "--pp", "2", "--reduction", "rs"}},
        Job{"dense_np8", 8, {"run", "llama", "--tp", "4", "--attn-dp", "2", "--pp", "2", "--dtype", "bf16"}},
        Job{"moe_np8",
            8,
            {"run", "deepseek-v2-lite", "--tp", "4", "--attn-dp", "2", "--dense-tp", "1", "--moe", "a2a", "--pp", "2"}},
        // Expert groups of two inside a TP group of four: the
        // all-to-all's own communicator.
        Job{"ep_np4", 4, {"run", "deepseek-v2-lite", "--tp", "4", "--moe", "a2a", "--ep", "2"}},
        // Context parallelism: each CP rank's keys and values gathered
        // over its CP communicator, a handoff of sequence shards.
        Job{"cp_np8", 8, {"run", "llama", "--tp", "4", "--cp", "2", "--pp", "2", "--dtype", "bf16"}},
        Job{"cp_generate_np8",
            8,
            {"run", "deepseek-v2-lite", "--tp", "8", "--attn-dp", "2", "--cp", "2", "--moe", "a2a", "--dense-tp", "1",
             "--generate", "3", "--chunk", "5", "--mixed"}},
        // Decode context parallelism: queries gathered and partials
        // exchanged over each DCP communicator, a cache split by position.
        Job{"dcp_generate_np8",
            8,
            {"run", "qwen3", "--tp", "4", "--dcp", "2", "--pp", "2", "--generate", "3", "--chunk", "4", "--mixed"}},
        // One token: one attention-DP group and most ranks'
        // slices hold no rows, and still join every collective.
        Job{"empty_ranks_np8",
            8,
            {"run", "deepseek-v2-lite", "--tp", "4", "--attn-dp", "2", "--dense-tp", "1", "--moe", "a2a", "--pp", "2",
             "--tokens", "1", "--requests", "1"}}),
    [](const auto& i) { return i.param.name; });

// The canonical collectives' bits are stated by the check itself from the
// design's order, not by the reduction code the threads backend shares:
// over the TP group, the attention-TP groups and the DP peers of 4 and 8
// ranks, with 8 and 16 canonical K-blocks, every rank's sums match.
TEST_F(Mpi, CanonicalCollectivesSumInTheDesignsOrderOnEveryRank) {
  for (int np : {4, 8}) {
    const Result r = MpirunOf(np, SEAM_COLLECTIVES_CHECK, {});
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    for (int rank = 0; rank < np; ++rank) {
      EXPECT_NE(r.out.find("rank " + std::to_string(rank) + ": 12 sums in the canonical order\n"), std::string::npos)
          << np << " ranks: " << r.out << r.err;
    }
  }
}

TEST_F(Mpi, NativeCollectivesAgreeWithinTheirTolerance) {
  const Result r = Mpirun(4, {"run", "llama", "--tp", "4", "--backend", "mpi", "--mpi-mode", "native"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("backend=mpi (native)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("within tolerance 0.0001: yes (MPI's own collectives sum in their own order)"),
            std::string::npos)
      << r.out;
  // Every sum is MPI's own all-reduce, not a reduce-scatter plus an all-gather;
  // the one all-gather is the LM head's vocabulary.
  EXPECT_NE(r.out.find("rank 0: 10 collectives, 132.0 KiB sent (1 all-gather, 9 all-reduce)\n"), std::string::npos)
      << r.out;
}

// seam links no MPI library, so the planner's commands start without loading
// one; a run on MPI becomes seam-mpi beside it, with the same flags.
TEST_F(Mpi, SeamLoadsNoMpiAndHandsMpiRunsToSeamMpi) {
  const Result seam = Shell("ldd " + Quote(SEAM_CLI), {});
  ASSERT_EQ(seam.code, 0) << seam.err;
  EXPECT_EQ(seam.out.find("libmpi"), std::string::npos) << seam.out;
  const std::string beside = (std::filesystem::path(SEAM_CLI).parent_path() / "seam-mpi").string();
  const Result mpi = Shell("ldd " + Quote(beside), {});
  EXPECT_NE(mpi.out.find("libmpi"), std::string::npos) << mpi.out << mpi.err;
  // A copy of seam without seam-mpi beside it says what it could not start.
  std::filesystem::copy_file(SEAM_CLI, PathOf("seam"));
  const Result alone = Shell(Quote(PathOf("seam")), {"run", "llama", "--backend", "mpi"});
  EXPECT_EQ(alone.code, 2);
  const std::filesystem::path dir = std::filesystem::canonical(PathOf("seam")).parent_path();
  EXPECT_EQ(alone.err, "seam: --backend mpi runs " + (dir / "seam-mpi").string() +
                           ", which could not be started (No such file or directory); it is built and installed "
                           "beside seam when OpenMPI is found (libopenmpi-dev)\n");
}

TEST_F(Mpi, AJobOfAnotherSizeIsRejectedWithTheSizeItNeeds) {
  const Result r = Mpirun(2, {"run", "llama", "--tp", "2", "--pp", "2", "--backend", "mpi"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("seam: the job has 2 MPI processes but the configuration has tp x pp = 2 x 2 = 4 ranks; "
                       "start it with mpirun -np 4\n"),
            std::string::npos)
      << r.err;
}

TEST_F(Mpi, FlagsOfTheMpiBackendNeedIt) {
  const Result r = Seam({"run", "llama", "--fault", "1:kill"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "seam: --fault and --mpi-mode go with --backend mpi\n");
}

// Ranks started with different flags refuse to run together, naming the rank
// and both runs, instead of comparing outputs that cannot agree.
TEST_F(Mpi, RanksStartedWithDifferentSeedsAreBadInputNamingTheRank) {
  const std::string script = ::testing::TempDir() + "/seam_mixed_seeds.sh";
  std::ofstream(script) << "#!/bin/sh\nseed=1\n[ \"$OMPI_COMM_WORLD_RANK\" = 1 ] && seed=2\nexec '" << SEAM_CLI
                        << "' run llama --tp 2 --backend mpi --seed $seed\n";
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  const Result r = MpirunOf(2, script, {});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("seam: the ranks disagree on the run: rank 1 has 'llama (4 layers, hidden 64) tp=2"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("seed=2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("; start every rank with the same flags\n"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

// Rank 1 alone given a flag: a rank bound unfused runs other steps, and a
// dump one rank asked for would be written by rank 0 or not at all.
TEST_F(Mpi, RanksStartedWithDifferentUnfusedOrDumpFlagsAreBadInput) {
  const std::string dir = ::testing::TempDir() + "/seam_mixed_dump";
  std::filesystem::remove_all(dir);
  for (const std::string& extra : {std::string("--unfused"), "--dump " + dir}) {
    const std::string script = ::testing::TempDir() + "/seam_mixed_flags.sh";
    std::ofstream(script) << "#!/bin/sh\nextra=\n[ \"$OMPI_COMM_WORLD_RANK\" = 1 ] && extra='" << extra << "'\nexec '"
                          << SEAM_CLI << "' run llama --tp 2 --backend mpi $extra\n";
    std::filesystem::permissions(script, std::filesystem::perms::owner_all);
    const Result r = MpirunOf(2, script, {});
    EXPECT_EQ(r.code, 2) << extra;
    EXPECT_NE(r.err.find("seam: the ranks disagree on the run: rank 1 has 'llama (4 layers, hidden 64) tp=2"),
              std::string::npos)
        << r.err;
    const std::string theirs = extra == "--unfused" ? "unfused=yes dump=-'" : "unfused=no dump=" + dir + "'";
    EXPECT_NE(r.err.find(theirs + " but rank 0 has"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir)) << "nothing is dumped by a run that did not run";
  }
}

// A fault that could never fire tests nothing: bad input, not a clean run.
TEST_F(Mpi, AFaultOnARankTheJobDoesNotHaveIsBadInput) {
  const Result r = Mpirun(2, {"run", "llama", "--tp", "2", "--backend", "mpi", "--fault", "99:kill"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("seam: --fault names rank 99 but the job has ranks 0 to 1: it could never fire\n"),
            std::string::npos)
      << r.err;
}

TEST_F(Mpi, AFaultAtACallTheRankNeverMakesIsBadInput) {
  const Result r = Mpirun(2, {"run", "llama", "--tp", "2", "--backend", "mpi", "--fault", "1:kill@1000"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("seam: rank 1 failed: --fault 1:kill@1000 never fired: rank 1 made 19 communication calls\n"),
            std::string::npos)
      << r.err;
}

// ---- faults: every rank ends, the failed rank is named, nothing hangs ----

class MpiFault : public Mpi {
 protected:
  // The MoE job on 8 processes with rank 3 struck by `fault`, and how long it took.
  Result Struck(const std::string& fault, double& seconds) const {
    const auto start = std::chrono::steady_clock::now();
    const Result r = Mpirun(8, {"run", "deepseek-v2-lite", "--tp", "4", "--attn-dp", "2", "--dense-tp", "1", "--moe",
                                "a2a", "--pp", "2", "--backend", "mpi", "--timeout", "3", "--fault", fault});
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
  }
};

TEST_F(MpiFault, ARankThatThrowsEndsTheJobNamingItself) {
  double seconds = 0;
  const Result r = Struck("3:throw", seconds);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("seam: rank 3 failed: injected fault at communication call 3\n"), std::string::npos) << r.err;
  EXPECT_LT(seconds, 30);
}

TEST_F(MpiFault, AKilledRankEndsTheJobAndMpirunNamesIt) {
  double seconds = 0;
  const Result r = Struck("3:kill@2", seconds);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("process rank 3"), std::string::npos) << r.err;
  EXPECT_LT(seconds, 30);
}

TEST_F(MpiFault, ARankThatStopsAnsweringIsNamedByTheRanksWaitingOnIt) {
  double seconds = 0;
  const Result r = Struck("3:hang", seconds);
  EXPECT_EQ(r.code, 3);  // a deadline exceeded, not a failed check
  EXPECT_NE(r.err.find("rank 3 did not answer within 3 s"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("stopped waiting"), std::string::npos) << r.err;
  // The timeout (3 s), a grace of 2 s, and starting 8 processes on 2 cores.
  EXPECT_LT(seconds, 15);
}

TEST_F(MpiFault, BadInputOnOneRankIsNamedBeforeAnyCollective) {
  double seconds = 0;
  const Result r = Struck("3:input", seconds);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("seam: rank 3 failed: bad input on this rank (injected by --fault)\n"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_LT(seconds, 30);
}

// A rank that stops answering in the middle of a generation (its 30th call,
// in a decode step) is named by the ranks waiting on it, as in one pass.
TEST_F(MpiFault, ARankThatStopsAnsweringMidGenerationIsNamedAndEveryRankEnds) {
  const auto start = std::chrono::steady_clock::now();
  const Result r =
      Mpirun(4, {"run", "deepseek-v2-lite", "--tp", "4", "--attn-dp", "4", "--moe", "a2a", "--requests", "6:4,3:2@2",
                 "--generate", "4", "--backend", "mpi", "--timeout", "3", "--fault", "3:hang@30"});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("rank 3 did not answer within 3 s"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_LT(seconds, 15);
}

}  // namespace
}  // namespace seam
