#include "mpi/bytes.h"

#include <numeric>

#include "mpi/wait.h"

namespace seam::mpi {
namespace {

std::vector<Bytes> Collect(const Bytes& mine, MPI_Comm c, double timeout_seconds, std::string_view what, bool all) {
  int size = 0, rank = 0;
  MPI_Comm_size(c, &size);
  MPI_Comm_rank(c, &rank);
  const bool here = all || rank == 0;
  // The lengths first, then the bytes, each a bounded wait.
  const int length = static_cast<int>(mine.data().size());
  std::vector<int> lengths(static_cast<size_t>(size));
  const int peers[1] = {-1};
  MPI_Request r;
  if (all) {
    Check(MPI_Iallgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, c, &r), "MPI_Iallgather");
  } else {
    Check(MPI_Igather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, c, &r), "MPI_Igather");
  }
  WaitAll(std::span(&r, 1), peers, timeout_seconds, what);
  std::vector<int> displs(static_cast<size_t>(size));
  std::exclusive_scan(lengths.begin(), lengths.end(), displs.begin(), 0);
  std::vector<char> buffer(here ? static_cast<size_t>(displs.back() + lengths.back()) : 0);
  if (all) {
    Check(MPI_Iallgatherv(mine.data().data(), length, MPI_CHAR, buffer.data(), lengths.data(), displs.data(), MPI_CHAR,
                          c, &r),
          "MPI_Iallgatherv");
  } else {
    Check(MPI_Igatherv(mine.data().data(), length, MPI_CHAR, buffer.data(), lengths.data(), displs.data(), MPI_CHAR, 0,
                       c, &r),
          "MPI_Igatherv");
  }
  WaitAll(std::span(&r, 1), peers, timeout_seconds, what);
  std::vector<Bytes> out;
  if (!here) return out;
  for (int i = 0; i < size; ++i) {
    Bytes b;
    const char* p = buffer.data() + displs[static_cast<size_t>(i)];
    b.data().assign(p, p + lengths[static_cast<size_t>(i)]);
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace

std::vector<Bytes> AllGatherBytes(const Bytes& mine, MPI_Comm c, double timeout_seconds, std::string_view what) {
  return Collect(mine, c, timeout_seconds, what, true);
}

std::vector<Bytes> GatherBytes(const Bytes& mine, MPI_Comm c, double timeout_seconds, std::string_view what) {
  return Collect(mine, c, timeout_seconds, what, false);
}

}  // namespace seam::mpi
