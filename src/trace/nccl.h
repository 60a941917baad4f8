// NCCL's debug log (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL) one line at
// a time: the numbers NCCL prints for datatypes and reductions, and the two
// kinds of line the reader keeps (a call, a communicator's init). The reader
// and the writer share these tables, so each reads what the other writes.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace seam::nccl {

// ncclDataType_t by the value a COLL line prints, as torch names each.
// 3 and 5 (ncclUint32, ncclUint64) are left empty: no torch dtype maps to
// them in PyTorch's NCCL process group, nor in vLLM's or SGLang's pynccl,
// and seam's other readers know no unsigned dtype wider than a byte.
// 1 is also what PyTorch passes for bool (and for fp8 before NCCL 2.24):
// it reads as uint8.
inline constexpr std::array<std::string_view, 12> kDtypes = {"int8",    "uint8",    "int32",         "",
                                                             "int64",   "",         "float16",       "float32",
                                                             "float64", "bfloat16", "float8_e4m3fn", "float8_e5m2"};
inline constexpr std::array<std::string_view, 12> kDtypeNames = {
    "ncclInt8",    "ncclUint8",   "ncclInt32",   "ncclUint32",   "ncclInt64",      "ncclUint64",
    "ncclFloat16", "ncclFloat32", "ncclFloat64", "ncclBfloat16", "ncclFloat8e4m3", "ncclFloat8e5m2"};
// ncclRedOp_t by value. From 5 on a value is a PreMulSum op made for one
// communicator (ncclRedOpCreatePreMulSum, PyTorch's ReduceOp.PREMUL_SUM):
// NCCL does not print its factor, and PyTorch makes one to divide by the
// data-parallel size (FSDP's gradient average), so it reads as "avg".
inline constexpr std::array<std::string_view, 5> kReductions = {"sum", "prod", "max", "min", "avg"};
inline constexpr int64_t kFirstUserOp = 5;

// The NCCL functions whose COLL lines seam reads.
enum class Call { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kReduce, kSend, kRecv, kAlltoAll };

// A line's NCCL part: "host:pid:tid [dev] NCCL INFO <message>", found
// wherever a launcher's prefix leaves it.
struct Info {
  std::string process;  // "host:pid"
  std::string_view message;
};

// "<Function>: opCount %lx sendbuff %p recvbuff %p count %zu datatype %d
// op %d root %d comm %p [nranks=%d] stream %p", as NCCL prints it for a call.
struct CollLine {
  Call call = Call::kAllReduce;
  std::string_view function;  // as printed
  int64_t count = 0;
  int datatype = 0;
  int64_t op = 0;
  int root = 0;
  uint64_t comm = 0;
  int nranks = 0;
};

// "[<function> ]comm %p rank %d nranks %d ... - Init START|COMPLETE".
struct InitLine {
  uint64_t comm = 0;
  int rank = 0;
  int nranks = 0;
  std::optional<uint64_t> comm_id;
  std::optional<uint64_t> parent;
  int64_t split_count = 0;  // splitCount or childCount: the parent's split it is
  int64_t color = 0;
};

// A line NCCL did not print in the form it should have: the reader names
// its file and line before `why`.
struct BadLine {
  std::string why;
};

std::optional<Info> FindInfo(std::string_view line);
// A COLL line, or nothing where the message is no call's; throws BadLine
// where it starts as a call's line and then does not read as one.
std::optional<CollLine> ParseColl(std::string_view message);
// An init line, or nothing where the message is none; throws BadLine where
// it ends as one and its fields do not read.
std::optional<InitLine> ParseInit(std::string_view message);

// "0x7f3c00000000", or "(nil)" for 0, as glibc prints %p.
std::string Pointer(uint64_t p);

}  // namespace seam::nccl
