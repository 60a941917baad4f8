#include "mpi/bytes.h"

#include <algorithm>
#include <numeric>

#include "mpi/wait.h"

namespace seam::mpi {
namespace {

// Point to point, each rank's length and then its bytes, so that a rank
// that does not send its own (stopped, or cut off) is the one named when the
// wait gives up. The tags are apart from the pipeline's on the world.
constexpr int kLengthTag = 8;
constexpr int kBytesTag = 9;

std::vector<Bytes> Collect(const Bytes& mine, MPI_Comm c, double timeout_seconds, std::string_view what, bool all) {
  int size = 0, rank = 0;
  MPI_Comm_size(c, &size);
  MPI_Comm_rank(c, &rank);
  const bool here = all || rank == 0;
  // Who receives from whom: everyone from everyone, or rank 0 from each.
  const auto receives = [&](int r) { return r != rank && here; };
  const auto sends = [&](int r) { return r != rank && (all || r == 0); };
  int length = static_cast<int>(mine.data().size());
  std::vector<int> lengths(static_cast<size_t>(size));
  lengths[static_cast<size_t>(rank)] = length;
  std::vector<MPI_Request> requests;
  std::vector<int> peers;
  const auto post = [&](int rc, int peer, const char* call) {
    Check(rc, call);
    peers.push_back(peer);
  };
  for (int r = 0; r < size; ++r) {
    if (receives(r)) {
      requests.emplace_back();
      post(MPI_Irecv(&lengths[static_cast<size_t>(r)], 1, MPI_INT, r, kLengthTag, c, &requests.back()), r, "MPI_Irecv");
    }
    if (sends(r)) {
      requests.emplace_back();
      post(MPI_Isend(&length, 1, MPI_INT, r, kLengthTag, c, &requests.back()), r, "MPI_Isend");
    }
  }
  WaitAll(requests, peers, timeout_seconds, what);
  std::vector<int> displs(static_cast<size_t>(size));
  std::exclusive_scan(lengths.begin(), lengths.end(), displs.begin(), 0);
  std::vector<char> buffer(here ? static_cast<size_t>(displs.back() + lengths.back()) : 0);
  if (here) std::copy(mine.data().begin(), mine.data().end(), buffer.begin() + displs[static_cast<size_t>(rank)]);
  requests.clear();
  peers.clear();
  for (int r = 0; r < size; ++r) {
    if (receives(r)) {
      requests.emplace_back();
      post(MPI_Irecv(buffer.data() + displs[static_cast<size_t>(r)], lengths[static_cast<size_t>(r)], MPI_CHAR, r,
                     kBytesTag, c, &requests.back()),
           r, "MPI_Irecv");
    }
    if (sends(r)) {
      requests.emplace_back();
      post(MPI_Isend(mine.data().data(), length, MPI_CHAR, r, kBytesTag, c, &requests.back()), r, "MPI_Isend");
    }
  }
  WaitAll(requests, peers, timeout_seconds, what);
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
