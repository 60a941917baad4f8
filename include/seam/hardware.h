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

// One GPU's compute and memory traffic: dense (not sparse) peak tensor
// TFLOPS by the dtype a matrix multiply reads its weights in (0: the GPU has
// no such tensor cores), HBM bandwidth, and the shares of each that large
// kernels reach.
struct Gpu {
  double tflops_bf16 = 0;
  double tflops_fp8 = 0;
  double tflops_fp4 = 0;
  double hbm_tbs = 0;  // TB/s, 1e12 bytes
  double compute_efficiency = 0;
  double memory_efficiency = 0;
  // The fixed time of one stage's kernels (a norm, its matrix multiplies,
  // attention or the expert kernels, each launched from a CUDA graph),
  // what a decode step of one sequence is made of beyond its reads.
  double stage_us = 0;
  bool operator==(const Gpu&) const = default;
};

struct Hardware {
  std::string name;
  std::string summary;
  int gpus_per_node = 8;
  double memory_gb = 0;  // per GPU, 1e9 bytes, as the driver reports it (nvidia-smi memory.total)
  Gpu gpu;
  Link node;                   // collectives within a node
  Link network;                // collectives and sends that cross nodes, over one GPU's NIC
  double a2a_node_gbs = 0;     // all-to-all within a node
  double a2a_network_gbs = 0;  // all-to-all across nodes
  double a2a_latency_us = 0;
  bool operator==(const Hardware&) const = default;
};

const std::vector<Hardware>& BuiltinHardware();

// The peak FLOP/s of a matrix multiply over weights of `weight_bytes` a
// parameter: fp4 tensor cores below one byte where the GPU has them, fp8 at
// one byte, bf16 otherwise (a GPU without fp4 multiplies 4-bit weights in
// bf16 after unpacking them, as the engines' MXFP4 kernels on Hopper do).
double PeakFlops(const Gpu& g, double weight_bytes);

// A built-in name, or a JSON file with every field of Hardware (sizes and
// bandwidths positive and bounded; unknown keys refused).
Expected<Hardware> LoadHardware(const std::string& name_or_path);
Expected<Hardware> HardwareFromJson(std::string_view text);

}  // namespace seam
