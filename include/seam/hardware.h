// seam/hardware.h — the machines a plan's collectives run on: per-GPU bus
// bandwidth and latency within a node (NVLink or PCIe) and across nodes
// (InfiniBand), the all-to-all bandwidth DeepEP reaches, and GPU memory.
//
// Bandwidths are nccl-tests "bus bandwidth" (busbw): bytes a rank moves
// (the all-reduce's 2(n-1)/n, the gather's (n-1)/n, already in a plan's
// bytes per token) per second on its slowest link. The built-in figures and
// their sources are in the README.
//
//   Expected<Hardware> h = LoadHardware("h200");     // or a JSON file
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "seam/error.h"

namespace seam {

struct Link {
  double busbw_gbs = 0;   // GB/s (1e9 bytes) per GPU at large messages
  double latency_us = 0;  // the time of a small collective
  bool operator==(const Link&) const = default;
};

struct Hardware {
  std::string name;
  std::string summary;
  int gpus_per_node = 8;
  double memory_gb = 0;        // per GPU, 1e9 bytes
  Link node;                   // collectives within a node
  Link network;                // collectives and sends that cross nodes
  double a2a_node_gbs = 0;     // all-to-all within a node
  double a2a_network_gbs = 0;  // all-to-all across nodes
  double a2a_latency_us = 0;
  bool operator==(const Hardware&) const = default;
};

const std::vector<Hardware>& BuiltinHardware();

// A built-in name, or a JSON file with every field of Hardware (sizes and
// bandwidths positive and bounded; unknown keys refused).
Expected<Hardware> LoadHardware(const std::string& name_or_path);
Expected<Hardware> HardwareFromJson(std::string_view text);

}  // namespace seam
