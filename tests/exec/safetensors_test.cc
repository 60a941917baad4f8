// safetensors: round trips of every dtype and shape, the byte layout of what
// the writer emits, and one exact error message per malformed case the strict
// reader refuses (plus truncated and corrupted files that must not crash).
#include "seam/runtime/safetensors.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "seam/error.h"
#include "seam/runtime/tensor.h"

namespace seam {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string TempPath(const std::string& name) {
  return (fs::path(::testing::TempDir()) / ("seam_st_" + name + ".safetensors")).string();
}

std::vector<uint8_t> FileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void WriteBytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

uint64_t Le64(const std::vector<uint8_t>& b, size_t at) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i) v |= static_cast<uint64_t>(b[at + i]) << (8 * i);
  return v;
}

void PutLe64(std::vector<uint8_t>& b, uint64_t v) {
  for (int i = 0; i < 8; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// A file: the header length (the header's own unless given), the header text
// and `data_bytes` bytes of data.
std::vector<uint8_t> Build(const std::string& header, size_t data_bytes, std::optional<uint64_t> length = {}) {
  std::vector<uint8_t> b;
  PutLe64(b, length.value_or(header.size()));
  b.insert(b.end(), header.begin(), header.end());
  b.resize(b.size() + data_bytes, 0);
  return b;
}

// The message of a malformed buffer; fails the test when it parses.
std::string ErrorOf(const std::vector<uint8_t>& bytes) {
  Expected<std::vector<StTensor>> r = ParseSafetensors(bytes);
  if (r.ok()) {
    ADD_FAILURE() << "parsed a malformed buffer";
    return "";
  }
  EXPECT_EQ(r.error().code, ErrorCode::kMalformed);
  return r.error().message;
}

std::string ErrorOf(const std::string& header, size_t data_bytes) { return ErrorOf(Build(header, data_bytes)); }

constexpr const char* kPrefix = "safetensors buffer: ";

std::vector<StTensor> RoundTrip(const std::string& name, const std::vector<StTensor>& tensors,
                                const std::map<std::string, std::string>& metadata = {}) {
  const std::string path = TempPath(name);
  Status s = WriteSafetensors(path, tensors, metadata);
  EXPECT_TRUE(s.ok()) << s.error().message;
  Expected<std::vector<StTensor>> back = ReadSafetensors(path);
  EXPECT_TRUE(back.ok()) << back.error().message;
  return back.ok() ? *back : std::vector<StTensor>{};
}

// ---- round trips ----

TEST(Safetensors, DtypeNamesRoundTrip) {
  for (StDtype d : {StDtype::kF32, StDtype::kBf16, StDtype::kI32, StDtype::kI64}) {
    Expected<StDtype> back = ParseStDtype(Name(d));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, d);
  }
  EXPECT_EQ(Name(StDtype::kBf16), "BF16");
  EXPECT_EQ(ParseStDtype("F16").error().message, "unknown dtype 'F16'; expected one of: F32, BF16, I32, I64");
  EXPECT_EQ(ItemSize(StDtype::kBf16), 2u);
  EXPECT_EQ(ItemSize(StDtype::kI64), 8u);
}

TEST(Safetensors, F32RoundTripsBitForBit) {
  const float denormal = std::numeric_limits<float>::denorm_min();
  const std::vector<StTensor> t = {
      {.name = "w",
       .dtype = StDtype::kF32,
       .shape = {2, 3},
       .floats = {1.5f, -0.0f, 3.14159274f, denormal, -1e30f, std::numeric_limits<float>::infinity()}}};
  const std::vector<StTensor> back = RoundTrip("f32", t);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].name, "w");
  EXPECT_EQ(back[0].dtype, StDtype::kF32);
  EXPECT_EQ(back[0].shape, (std::vector<int64_t>{2, 3}));
  ASSERT_EQ(back[0].floats.size(), 6u);
  EXPECT_EQ(std::memcmp(back[0].floats.data(), t[0].floats.data(), 6 * sizeof(float)), 0);  // -0 stays -0
  EXPECT_TRUE(back[0].ints.empty());
}

TEST(Safetensors, F32NanKeepsItsPayload) {
  const float nan = std::bit_cast<float>(0x7fc01234u);
  const std::vector<StTensor> back = RoundTrip("nan", {{.name = "n", .shape = {1}, .floats = {nan}}});
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(std::bit_cast<uint32_t>(back[0].floats[0]), 0x7fc01234u);
}

TEST(Safetensors, Bf16RoundsToNearestEven) {
  // 1 + 2^-8 lies halfway between bf16 neighbours 1 and 1 + 2^-7: ties go to even (1).
  // 1 + 3*2^-8 lies halfway between 1 + 2^-7 and 1 + 2^-6: ties go to even (1 + 2^-6).
  const std::vector<float> values = {1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, 3.14159274f, -2.5f, 1e-40f, 65504.0f};
  const std::vector<StTensor> back =
      RoundTrip("bf16", {{.name = "b", .dtype = StDtype::kBf16, .shape = {3, 2}, .floats = values}});
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].dtype, StDtype::kBf16);
  ASSERT_EQ(back[0].floats.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(std::bit_cast<uint32_t>(back[0].floats[i]), std::bit_cast<uint32_t>(RoundBf16(values[i]))) << i;
  }
  EXPECT_EQ(back[0].floats[0], 1.0f);
  EXPECT_EQ(back[0].floats[1], 1.0f + 0x1p-6f);
  // A value already in bf16 round-trips exactly.
  EXPECT_EQ(back[0].floats[3], -2.5f);
}

TEST(Safetensors, Bf16BytesAreTheUpperHalf) {
  const std::string path = TempPath("bf16_bytes");
  ASSERT_TRUE(
      WriteSafetensors(path, {{.name = "b", .dtype = StDtype::kBf16, .shape = {2}, .floats = {1.0f, -2.0f}}}).ok());
  const std::vector<uint8_t> b = FileBytes(path);
  const size_t data = 8 + Le64(b, 0);
  ASSERT_EQ(b.size(), data + 4);
  EXPECT_EQ(b[data], 0x80);  // 1.0 = 0x3f80, little-endian
  EXPECT_EQ(b[data + 1], 0x3f);
  EXPECT_EQ(b[data + 2], 0x00);  // -2.0 = 0xc000
  EXPECT_EQ(b[data + 3], 0xc0);
}

TEST(Safetensors, IntegersRoundTripExactly) {
  const int64_t big = (int64_t{1} << 53) + 1;  // not representable as a double
  const std::vector<StTensor> t = {
      {.name = "i32",
       .dtype = StDtype::kI32,
       .shape = {4},
       .ints = {std::numeric_limits<int32_t>::min(), -1, 0, std::numeric_limits<int32_t>::max()}},
      {.name = "i64",
       .dtype = StDtype::kI64,
       .shape = {2, 2},
       .ints = {std::numeric_limits<int64_t>::min(), -big, big, std::numeric_limits<int64_t>::max()}},
  };
  EXPECT_EQ(RoundTrip("ints", t), t);
}

TEST(Safetensors, ShapesOfEveryRank) {
  const std::vector<StTensor> t = {
      {.name = "scalar", .shape = {}, .floats = {42.0f}},
      {.name = "vector", .shape = {3}, .floats = {1, 2, 3}},
      {.name = "cube", .shape = {2, 1, 3}, .floats = {1, 2, 3, 4, 5, 6}},
      {.name = "empty", .shape = {0}},
      {.name = "empty2d", .dtype = StDtype::kI64, .shape = {4, 0}},
      {.name = "last", .dtype = StDtype::kI32, .shape = {1}, .ints = {7}},
  };
  EXPECT_EQ(RoundTrip("shapes", t), t);
}

TEST(Safetensors, ReadsInTheWrittenOrder) {
  const std::vector<StTensor> t = {
      {.name = "zeta", .shape = {1}, .floats = {1}},
      {.name = "e2", .shape = {0}},
      {.name = "e1", .shape = {0}},
      {.name = "alpha", .shape = {1}, .floats = {2}},
  };
  EXPECT_EQ(RoundTrip("order", t), t);
}

// Opening maps the file and checks every header entry but decodes nothing;
// a tensor is decoded when it is read, equal to what was written.
TEST(Safetensors, AnOpenedFileReadsOneTensorAtATime) {
  const std::string path = TempPath("lazy");
  const std::vector<StTensor> t = {{.name = "a", .dtype = StDtype::kF32, .shape = {2}, .floats = {1, 2}},
                                   {.name = "b", .dtype = StDtype::kBf16, .shape = {1, 3}, .floats = {3, 4, 5}}};
  ASSERT_TRUE(WriteSafetensors(path, t, {{"k", "v"}}).ok());
  Expected<SafetensorsFile> f = SafetensorsFile::Open(path);
  ASSERT_TRUE(f.ok()) << f.error().message;
  ASSERT_EQ(f->tensors().size(), 2u);
  EXPECT_EQ(f->tensors()[1].name, "b");
  EXPECT_EQ(f->tensors()[1].shape, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(f->Find("c"), nullptr);
  EXPECT_EQ(f->Read("b"), t[1]);
  EXPECT_EQ(f->Read("a"), t[0]);
  EXPECT_EQ(f->metadata().at("k"), "v");
}

// A range of a tensor's elements reads what the whole read gives there, for
// F32 and BF16 and at either end; a range past the end, or of integers, is a
// caller's bug.
TEST(Safetensors, ARangeOfElementsIsThatSliceOfTheWholeTensor) {
  const std::string path = TempPath("ranges");
  std::vector<float> values(70);
  for (size_t i = 0; i < values.size(); ++i) values[i] = RoundBf16(0.1f * static_cast<float>(i) - 3.0f);
  values[3] = std::bit_cast<float>(0x12345678u);  // F32 keeps every bit
  std::vector<float> halves = values;
  halves[3] = RoundBf16(halves[3]);
  const std::vector<StTensor> t = {{.name = "f", .dtype = StDtype::kF32, .shape = {7, 10}, .floats = values},
                                   {.name = "h", .dtype = StDtype::kBf16, .shape = {7, 10}, .floats = halves},
                                   {.name = "i", .dtype = StDtype::kI32, .shape = {2}, .ints = {1, 2}}};
  ASSERT_TRUE(WriteSafetensors(path, t).ok());
  Expected<SafetensorsFile> f = SafetensorsFile::Open(path);
  ASSERT_TRUE(f.ok()) << f.error().message;
  for (const std::string name : {"f", "h"}) {
    const std::vector<float> whole = f->Read(name).floats;
    for (auto [first, count] : {std::pair<uint64_t, size_t>{0, 70}, {0, 10}, {3, 1}, {30, 40}, {69, 1}, {70, 0}}) {
      std::vector<float> part(count);
      f->ReadFloats(name, first, part);
      for (size_t i = 0; i < count; ++i) {
        ASSERT_EQ(std::bit_cast<uint32_t>(part[i]), std::bit_cast<uint32_t>(whole[first + i])) << name << " " << first;
      }
    }
  }
  std::vector<float> two(2);
  EXPECT_THROW(f->ReadFloats("f", 69, two), InternalError);
  EXPECT_THROW(f->ReadFloats("f", 71, std::span<float>()), InternalError);
  EXPECT_THROW(f->ReadFloats("i", 0, two), InternalError);
  EXPECT_THROW(f->ReadFloats("x", 0, two), InternalError);
}

// A FIFO named like a weights file would block a reader forever.
TEST(Safetensors, AnythingButARegularFileIsRefusedWithoutWaiting) {
  const std::string fifo = TempPath("fifo");
  fs::remove(fifo);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(ReadSafetensors(fifo).error().message, "cannot read " + fifo + ": not a regular file");
  const std::string dir = TempPath("a_dir");
  fs::create_directories(dir);
  EXPECT_EQ(ReadSafetensors(dir).error().message, "cannot read " + dir + ": not a regular file");
}

TEST(Safetensors, NoTensorsAtAll) {
  const std::string path = TempPath("none");
  ASSERT_TRUE(WriteSafetensors(path, {}).ok());
  const std::vector<uint8_t> b = FileBytes(path);
  EXPECT_EQ(b.size(), 16u);
  EXPECT_EQ(std::string(b.begin() + 8, b.end()), "{}      ");
  Expected<std::vector<StTensor>> back = ReadSafetensors(path);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_TRUE(back->empty());
}

TEST(Safetensors, MetadataRoundTrips) {
  const std::map<std::string, std::string> meta = {{"format", "pt"}, {"note", "quotes \" and\nnewlines, ünïcode"}};
  const std::string path = TempPath("meta");
  ASSERT_TRUE(WriteSafetensors(path, {{.name = "x", .shape = {1}, .floats = {1}}}, meta).ok());
  Expected<std::map<std::string, std::string>> back = ReadSafetensorsMetadata(path);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, meta);
  const std::vector<uint8_t> b = FileBytes(path);
  const json header = json::parse(b.begin() + 8, b.begin() + 8 + static_cast<long>(Le64(b, 0)));
  EXPECT_EQ(header["__metadata__"], json(meta));
  // Without metadata there is no __metadata__ entry.
  ASSERT_TRUE(WriteSafetensors(path, {{.name = "x", .shape = {1}, .floats = {1}}}).ok());
  const std::vector<uint8_t> plain = FileBytes(path);
  EXPECT_FALSE(
      json::parse(plain.begin() + 8, plain.begin() + 8 + static_cast<long>(Le64(plain, 0))).contains("__metadata__"));
  EXPECT_TRUE(ReadSafetensorsMetadata(path)->empty());
}

// ---- the byte layout ----

TEST(Safetensors, LayoutIsLittleEndianAlignedAndContiguous) {
  const std::vector<StTensor> t = {
      {.name = "a", .shape = {3}, .floats = {1.0f, 2.0f, -3.5f}},
      {.name = "b", .dtype = StDtype::kBf16, .shape = {1, 3}, .floats = {1, 2, 3}},
      {.name = "c", .dtype = StDtype::kI64, .shape = {1}, .ints = {0x0102030405060708}},
  };
  const std::string path = TempPath("layout");
  ASSERT_TRUE(WriteSafetensors(path, t, {{"format", "pt"}}).ok());
  const std::vector<uint8_t> b = FileBytes(path);
  const uint64_t n = Le64(b, 0);
  EXPECT_EQ((8 + n) % 8, 0u) << "the data section starts 8-byte aligned";
  const std::string header(b.begin() + 8, b.begin() + 8 + static_cast<long>(n));
  EXPECT_EQ(header.front(), '{');
  EXPECT_EQ(header.find_last_not_of(' '), header.rfind('}')) << "padded with spaces only";
  EXPECT_LT(header.size() - 1 - header.rfind('}'), 8u);
  const json h = json::parse(header);
  EXPECT_EQ(h["a"], json::parse(R"({"dtype":"F32","shape":[3],"data_offsets":[0,12]})"));
  EXPECT_EQ(h["b"], json::parse(R"({"dtype":"BF16","shape":[1,3],"data_offsets":[12,18]})"));
  EXPECT_EQ(h["c"], json::parse(R"({"dtype":"I64","shape":[1],"data_offsets":[18,26]})"));
  ASSERT_EQ(b.size(), 8 + n + 26);
  const size_t data = 8 + n;
  uint32_t bits = 0;
  for (int i = 0; i < 4; ++i) bits |= static_cast<uint32_t>(b[data + 8 + i]) << (8 * i);
  EXPECT_EQ(std::bit_cast<float>(bits), -3.5f);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(b[data + 18 + i], 8 - i) << "I64 little-endian byte " << i;
}

TEST(Safetensors, HeaderLengthIsLittleEndian) {
  const std::string path = TempPath("length");
  std::vector<StTensor> t;
  for (int i = 0; i < 40; ++i) t.push_back({.name = "tensor_with_a_long_name_" + std::to_string(i), .shape = {0}});
  ASSERT_TRUE(WriteSafetensors(path, t).ok());
  const std::vector<uint8_t> b = FileBytes(path);
  const uint64_t n = b.size() - 8;  // no data
  EXPECT_GT(n, 256u);
  EXPECT_EQ(b[0], n & 0xff);
  EXPECT_EQ(b[1], (n >> 8) & 0xff);
  for (int i = 2; i < 8; ++i) EXPECT_EQ(b[i], 0);
}

TEST(Safetensors, ParsesWhatReadReads) {
  const std::string path = TempPath("memory");
  const std::vector<StTensor> t = {{.name = "x", .dtype = StDtype::kI32, .shape = {2}, .ints = {5, -5}}};
  ASSERT_TRUE(WriteSafetensors(path, t).ok());
  Expected<std::vector<StTensor>> back = ParseSafetensors(FileBytes(path));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, t);
}

TEST(Safetensors, AcceptsUnpaddedHeadersFromOtherWriters) {
  const std::string header = R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
  std::vector<uint8_t> b = Build(header, 4);
  b[b.size() - 2] = 0x80;
  b[b.size() - 1] = 0x3f;  // 1.0f
  Expected<std::vector<StTensor>> back = ParseSafetensors(b);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ((*back)[0].floats, std::vector<float>{1.0f});
}

// ---- the writer refuses inconsistent tensors ----

TEST(SafetensorsWrite, RefusesInconsistentTensors) {
  const std::string path = TempPath("bad_write");
  auto msg = [&](std::vector<StTensor> t) {
    Status s = WriteSafetensors(path, t);
    EXPECT_FALSE(s.ok());
    return s.ok() ? std::string() : s.error().message;
  };
  EXPECT_EQ(msg({{.name = "a", .shape = {2, 2}, .floats = {1, 2, 3}}}),
            "safetensors: tensor 'a': shape [2, 2] has 4 elements but 3 values are given");
  EXPECT_EQ(msg({{.name = "a", .shape = {1}, .floats = {1}}, {.name = "a", .shape = {1}, .floats = {1}}}),
            "safetensors: tensor 'a': duplicate name");
  EXPECT_EQ(msg({{.name = "__metadata__", .shape = {0}}}), "safetensors: tensor '__metadata__': the name is reserved");
  EXPECT_EQ(msg({{.name = "a", .shape = {-1}}}), "safetensors: tensor 'a': shape [-1] has a negative entry");
  EXPECT_EQ(msg({{.name = "a", .dtype = StDtype::kI32, .shape = {1}, .ints = {int64_t{1} << 31}}}),
            "safetensors: tensor 'a': value 2147483648 does not fit in I32");
  EXPECT_EQ(msg({{.name = "a", .dtype = StDtype::kI64, .shape = {1}, .floats = {1}, .ints = {1}}}),
            "safetensors: tensor 'a': dtype I64 keeps its values in ints, but floats holds 1");
  EXPECT_EQ(msg({{.name = std::string("\xff"), .shape = {0}}}), "safetensors: a tensor name is not valid UTF-8");
}

TEST(SafetensorsWrite, ReportsAnUnwritablePath) {
  Status s = WriteSafetensors((fs::path(::testing::TempDir()) / "no_such_dir" / "x.safetensors").string(), {});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message.rfind("cannot write ", 0), 0u) << s.error().message;
}

// ---- the reader refuses every malformed file, with a clear message ----

TEST(SafetensorsMalformed, ShorterThanTheLength) {
  EXPECT_EQ(
      ErrorOf(std::vector<uint8_t>{1, 2, 3}),
      std::string(kPrefix) + "3 bytes is too short for a safetensors file (it starts with an 8-byte header length)");
  EXPECT_EQ(
      ErrorOf(std::vector<uint8_t>{}),
      std::string(kPrefix) + "0 bytes is too short for a safetensors file (it starts with an 8-byte header length)");
}

TEST(SafetensorsMalformed, ErrorsNameTheFile) {
  const std::string path = TempPath("short");
  WriteBytes(path, {1, 2, 3});
  Expected<std::vector<StTensor>> r = ReadSafetensors(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kMalformed);
  EXPECT_EQ(r.error().message,
            path + ": 3 bytes is too short for a safetensors file (it starts with an 8-byte header length)");
  Expected<std::map<std::string, std::string>> m = ReadSafetensorsMetadata(path);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().message, r.error().message);
}

TEST(SafetensorsMalformed, MissingFile) {
  const std::string path = TempPath("does_not_exist");
  Expected<std::vector<StTensor>> r = ReadSafetensors(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.error().message, "cannot read " + path + ": no such file");
}

TEST(SafetensorsMalformed, HeaderLengthBeyondTheFile) {
  EXPECT_EQ(ErrorOf(Build("{}", 0, 100)),
            std::string(kPrefix) + "header length 100 runs past the end of the file (2 bytes after the length)");
}

TEST(SafetensorsMalformed, AbsurdHeaderLength) {
  EXPECT_EQ(ErrorOf(Build("{}", 0, 100'000'001)),
            std::string(kPrefix) + "header length 100000001 is absurd (more than 100000000 bytes)");
  EXPECT_EQ(ErrorOf(Build("{}", 0, std::numeric_limits<uint64_t>::max())),
            std::string(kPrefix) + "header length 18446744073709551615 is absurd (more than 100000000 bytes)");
}

TEST(SafetensorsMalformed, HeaderNotJson) {
  EXPECT_EQ(ErrorOf(R"({"a":)", 0), std::string(kPrefix) + "header is not valid JSON (error at byte 6 of the header)");
  EXPECT_EQ(ErrorOf("", 0), std::string(kPrefix) + "header is not valid JSON (error at byte 1 of the header)");
  EXPECT_EQ(ErrorOf("{} x", 0), std::string(kPrefix) + "header is not valid JSON (error at byte 4 of the header)");
  // Strings must be UTF-8.
  EXPECT_EQ(ErrorOf("{\"\xff\":{}}", 0),
            std::string(kPrefix) + "header is not valid JSON (error at byte 3 of the header)");
}

TEST(SafetensorsMalformed, HeaderNotAnObject) {
  EXPECT_EQ(ErrorOf("[1, 2]", 0), std::string(kPrefix) + "header is not a JSON object");
  EXPECT_EQ(ErrorOf("7", 0), std::string(kPrefix) + "header is not a JSON object");
}

TEST(SafetensorsMalformed, DeepNesting) {
  EXPECT_EQ(ErrorOf(std::string(100000, '['), 0), std::string(kPrefix) + "header nests deeper than 8 levels");
}

TEST(SafetensorsMalformed, EntryNotAnObject) {
  EXPECT_EQ(ErrorOf(R"({"a":[0, 4]})", 0), std::string(kPrefix) + "tensor 'a': entry is not an object");
}

TEST(SafetensorsMalformed, MissingFields) {
  EXPECT_EQ(ErrorOf(R"({"a":{"shape":[1],"data_offsets":[0,4]}})", 4),
            std::string(kPrefix) + "tensor 'a': missing field 'dtype'");
  EXPECT_EQ(ErrorOf(R"({"a":{"dtype":"F32","data_offsets":[0,4]}})", 4),
            std::string(kPrefix) + "tensor 'a': missing field 'shape'");
  EXPECT_EQ(ErrorOf(R"({"a":{"dtype":"F32","shape":[1]}})", 4),
            std::string(kPrefix) + "tensor 'a': missing field 'data_offsets'");
}

TEST(SafetensorsMalformed, UnknownField) {
  EXPECT_EQ(ErrorOf(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"stride":[1]}})", 4),
            std::string(kPrefix) + "tensor 'a': unknown field 'stride' (expected dtype, shape, data_offsets)");
}

TEST(SafetensorsMalformed, DuplicateField) {
  EXPECT_EQ(ErrorOf(R"({"a":{"dtype":"F32","dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 4),
            std::string(kPrefix) + "tensor 'a': duplicate field 'dtype'");
}

TEST(SafetensorsMalformed, UnknownDtype) {
  EXPECT_EQ(ErrorOf(R"({"a":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}})", 4),
            std::string(kPrefix) + "tensor 'a': unknown dtype 'F16'; expected one of: F32, BF16, I32, I64");
  EXPECT_EQ(ErrorOf(R"({"a":{"dtype":32,"shape":[1],"data_offsets":[0,4]}})", 4),
            std::string(kPrefix) + "tensor 'a': dtype is not a string");
}

TEST(SafetensorsMalformed, BadShapes) {
  EXPECT_EQ(ErrorOf(R"({"a":{"dtype":"F32","shape":[2,-3],"data_offsets":[0,0]}})", 0),
            std::string(kPrefix) + "tensor 'a': shape[1] is negative (-3)");
  EXPECT_EQ(ErrorOf(R"({"a":{"dtype":"F32","shape":[2.0],"data_offsets":[0,8]}})", 8),
            std::string(kPrefix) + "tensor 'a': shape[0] is not an integer");
  EXPECT_EQ(ErrorOf(R"({"a":{"dtype":"F32","shape":["2"],"data_offsets":[0,8]}})", 8),
            std::string(kPrefix) + "tensor 'a': shape[0] is not an integer");
  EXPECT_EQ(ErrorOf(R"({"a":{"dtype":"F32","shape":2,"data_offsets":[0,8]}})", 8),
            std::string(kPrefix) + "tensor 'a': shape is not an array");
  EXPECT_EQ(ErrorOf(R"({"a":{"dtype":"F32","shape":[9223372036854775808],"data_offsets":[0,8]}})", 8),
            std::string(kPrefix) + "tensor 'a': shape[0] is too large (9223372036854775808)");
}

TEST(SafetensorsMalformed, ShapeProductOverflows) {
  EXPECT_EQ(ErrorOf(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}})", 0),
            std::string(kPrefix) + "tensor 'a': shape [4294967296, 4294967296] has more elements than fit in 64 bits");
  // A product that fits in 64 bits but not once multiplied by the item size.
  EXPECT_EQ(
      ErrorOf(R"({"a":{"dtype":"I64","shape":[4611686018427387904],"data_offsets":[0,0]}})", 0),
      std::string(kPrefix) +
          "tensor 'a': data_offsets [0, 0] hold 0 bytes but shape [4611686018427387904] of I64 needs more than 2^64");
}

TEST(SafetensorsMalformed, ZeroSizedShapesDoNotOverflow) {
  Expected<std::vector<StTensor>> r =
      ParseSafetensors(Build(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296,0],"data_offsets":[0,0]}})", 0));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE((*r)[0].floats.empty());
}

TEST(SafetensorsMalformed, BadDataOffsets) {
  EXPECT_EQ(ErrorOf(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", 4),
            std::string(kPrefix) + "tensor 'a': data_offsets is not an array of two integers [begin, end]");
  EXPECT_EQ(ErrorOf(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":{"begin":0}}})", 4),
            std::string(kPrefix) + "tensor 'a': data_offsets is not an array of two integers [begin, end]");
  EXPECT_EQ(ErrorOf(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,"4"]}})", 4),
            std::string(kPrefix) + "tensor 'a': data_offsets[1] is not a non-negative integer");
  EXPECT_EQ(ErrorOf(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[-4,0]}})", 4),
            std::string(kPrefix) + "tensor 'a': data_offsets[0] is not a non-negative integer");
  EXPECT_EQ(ErrorOf(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0.0,4]}})", 4),
            std::string(kPrefix) + "tensor 'a': data_offsets[0] is not a non-negative integer");
}

TEST(SafetensorsMalformed, BeginAfterEnd) {
  EXPECT_EQ(ErrorOf(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}})", 4),
            std::string(kPrefix) + "tensor 'a': data_offsets [4, 0] begin after they end");
}

TEST(SafetensorsMalformed, EndBeyondTheData) {
  EXPECT_EQ(ErrorOf(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", 8),
            std::string(kPrefix) + "tensor 'a': data_offsets [0, 16] end beyond the data section (8 bytes)");
  EXPECT_EQ(ErrorOf(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,18446744073709551615]}})", 8),
            std::string(kPrefix) +
                "tensor 'a': data_offsets [0, 18446744073709551615] end beyond the data section (8 bytes)");
}

TEST(SafetensorsMalformed, SizeDoesNotMatchTheShape) {
  EXPECT_EQ(ErrorOf(R"({"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,12]}})", 12),
            std::string(kPrefix) + "tensor 'a': data_offsets [0, 12] hold 12 bytes but shape [2, 2] of F32 needs 16");
  EXPECT_EQ(ErrorOf(R"({"a":{"dtype":"BF16","shape":[3],"data_offsets":[0,12]}})", 12),
            std::string(kPrefix) + "tensor 'a': data_offsets [0, 12] hold 12 bytes but shape [3] of BF16 needs 6");
}

TEST(SafetensorsMalformed, OverlappingTensors) {
  EXPECT_EQ(ErrorOf(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},
                        "b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                    12),
            std::string(kPrefix) + "tensors 'a' [0, 8) and 'b' [4, 12) overlap in the data section");
  // An empty tensor inside another still overlaps it.
  EXPECT_EQ(ErrorOf(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},
                        "e":{"dtype":"F32","shape":[0],"data_offsets":[4,4]}})",
                    8),
            std::string(kPrefix) + "tensors 'a' [0, 8) and 'e' [4, 4) overlap in the data section");
  // Two names for the same bytes.
  EXPECT_EQ(ErrorOf(R"({"b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},
                        "a":{"dtype":"I32","shape":[1],"data_offsets":[0,4]}})",
                    4),
            std::string(kPrefix) + "tensors 'b' [0, 4) and 'a' [0, 4) overlap in the data section");
}

TEST(SafetensorsMalformed, BytesNotCovered) {
  EXPECT_EQ(
      ErrorOf(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},
                        "b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
              12),
      std::string(kPrefix) + "bytes [4, 8) of the data section belong to no tensor (the data must be fully indexed)");
  EXPECT_EQ(
      ErrorOf(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8),
      std::string(kPrefix) + "bytes [0, 4) of the data section belong to no tensor (the data must be fully indexed)");
  EXPECT_EQ(
      ErrorOf(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 7),
      std::string(kPrefix) + "bytes [4, 7) of the data section belong to no tensor (the data must be fully indexed)");
  EXPECT_EQ(
      ErrorOf("{}", 1),
      std::string(kPrefix) + "bytes [0, 1) of the data section belong to no tensor (the data must be fully indexed)");
}

TEST(SafetensorsMalformed, DuplicateTensorNames) {
  EXPECT_EQ(ErrorOf(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},
                        "a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                    8),
            std::string(kPrefix) + "duplicate tensor name 'a'");
}

TEST(SafetensorsMalformed, BadMetadata) {
  EXPECT_EQ(ErrorOf(R"({"__metadata__":["pt"]})", 0), std::string(kPrefix) + "__metadata__ is not an object");
  EXPECT_EQ(ErrorOf(R"({"__metadata__":{"format":1}})", 0),
            std::string(kPrefix) + "__metadata__: value of 'format' is not a string");
  EXPECT_EQ(ErrorOf(R"({"__metadata__":{"k":"a","k":"b"}})", 0),
            std::string(kPrefix) + "__metadata__: duplicate key 'k'");
  EXPECT_EQ(ErrorOf(R"({"__metadata__":{},"__metadata__":{}})", 0), std::string(kPrefix) + "duplicate __metadata__");
}

// Every truncation and many single-byte corruptions of a valid file either
// parse or are kMalformed errors: never a crash or a throw.
TEST(SafetensorsMalformed, TruncationsAndCorruptionsNeverCrash) {
  const std::string path = TempPath("fuzz");
  ASSERT_TRUE(WriteSafetensors(path,
                               {{.name = "a", .dtype = StDtype::kBf16, .shape = {2, 2}, .floats = {1, 2, 3, 4}},
                                {.name = "b", .dtype = StDtype::kI64, .shape = {1}, .ints = {-9}},
                                {.name = "c", .shape = {}, .floats = {0.5f}}},
                               {{"format", "pt"}})
                  .ok());
  const std::vector<uint8_t> good = FileBytes(path);
  ASSERT_TRUE(ParseSafetensors(good).ok());
  int parsed = 0;
  for (size_t len = 0; len < good.size(); ++len) {
    Expected<std::vector<StTensor>> r = ParseSafetensors(std::span(good.data(), len));
    ASSERT_FALSE(r.ok()) << "truncated to " << len;
    EXPECT_EQ(r.error().code, ErrorCode::kMalformed);
  }
  for (size_t at = 0; at < good.size(); ++at) {
    for (uint8_t v : {uint8_t{0}, uint8_t{0xff}, uint8_t{'['}, uint8_t{'9'}, uint8_t{'"'}, uint8_t{0x80}}) {
      std::vector<uint8_t> bad = good;
      bad[at] = v;
      Expected<std::vector<StTensor>> r = ParseSafetensors(bad);
      if (r.ok()) {
        ++parsed;
      } else {
        EXPECT_EQ(r.error().code, ErrorCode::kMalformed) << r.error().message;
      }
    }
  }
  EXPECT_GT(parsed, 0);  // corrupting the data section or padding still parses
}

}  // namespace
}  // namespace seam
