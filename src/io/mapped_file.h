// A regular file mapped read-only: its bytes without reading them all into
// memory (the kernel pages in what is touched). Anything but a regular file
// (a FIFO, a device, a directory) is refused without blocking on it.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "seam/error.h"

namespace seam {

class MappedFile {
 public:
  static Expected<std::shared_ptr<const MappedFile>> Open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  std::span<const uint8_t> bytes() const { return {data_, size_}; }

 private:
  MappedFile(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  const uint8_t* data_;
  size_t size_;
};

}  // namespace seam
