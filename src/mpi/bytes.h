// Byte buffers that carry results and statuses between MPI ranks (internal).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "seam/error.h"

namespace seam::mpi {

// Appends values in a fixed layout; Reader takes them back in order.
class Bytes {
 public:
  void Int(int64_t v) { Put(&v, sizeof v); }
  void String(std::string_view s) {
    Int(static_cast<int64_t>(s.size()));
    Put(s.data(), s.size());
  }
  void Floats(const float* p, size_t n) { Put(p, n * sizeof(float)); }
  const std::vector<char>& data() const { return data_; }
  std::vector<char>& data() { return data_; }

 private:
  void Put(const void* p, size_t n) {
    const char* c = static_cast<const char*>(p);
    data_.insert(data_.end(), c, c + n);
  }
  std::vector<char> data_;
};

class Reader {
 public:
  explicit Reader(const Bytes& b) : data_(b.data()) {}
  int64_t Int() {
    int64_t v = 0;
    Take(&v, sizeof v);
    return v;
  }
  std::string String() {
    std::string s(static_cast<size_t>(Int()), '\0');
    Take(s.data(), s.size());
    return s;
  }
  void Floats(float* p, size_t n) { Take(p, n * sizeof(float)); }

 private:
  void Take(void* p, size_t n) {
    SEAM_CHECK(at_ + n <= data_.size(), "a message from another rank ended early");
    // An empty tensor (a rank holding no rows) may have no storage at all,
    // and memcpy wants a real pointer even for zero bytes.
    if (n > 0) std::memcpy(p, data_.data() + at_, n);
    at_ += n;
  }
  const std::vector<char>& data_;
  size_t at_ = 0;
};

// Every rank's bytes, on every rank (in rank order), within the timeout.
std::vector<Bytes> AllGatherBytes(const Bytes& mine, MPI_Comm c, double timeout_seconds, std::string_view what);
// Every rank's bytes on rank 0 (empty elsewhere), within the timeout.
std::vector<Bytes> GatherBytes(const Bytes& mine, MPI_Comm c, double timeout_seconds, std::string_view what);

}  // namespace seam::mpi
