#include "seam/runtime/checkpoint.h"

#include "core/strict_json.h"

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "seam/files.h"

namespace seam {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kSingle = "model.safetensors";
constexpr const char* kIndex = "model.safetensors.index.json";
constexpr size_t kMaxIndexBytes = 64 << 20;  // a trillion-parameter index is a few MB

// A shard's name from the index: a file in the checkpoint's own directory.
bool PlainFileName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

// The weight map of the index: tensor name -> shard file.
Expected<std::map<std::string, std::string>> ReadWeightMap(const std::string& path) {
  Expected<std::string> text = ReadFileAtMost(path, kMaxIndexBytes);
  if (!text) return text.error();
  StrictJson<json> parsed = ParseStrictJson<json>(*text);
  if (parsed.error && parsed.error->problem != JsonProblem::kSyntax) {
    return Malformed(fmt::format("{}: {}", path, parsed.error->message));
  }
  const json j = std::move(parsed.value);
  if (parsed.error || !j.is_object()) return Malformed(fmt::format("{}: not a JSON object", path));
  auto map = j.find("weight_map");
  if (map == j.end() || !map->is_object()) return Malformed(fmt::format("{}: no \"weight_map\" object", path));
  std::map<std::string, std::string> out;
  for (auto it = map->begin(); it != map->end(); ++it) {
    if (!it->is_string() || !PlainFileName(it->get<std::string>())) {
      return Malformed(
          fmt::format("{}: weight_map[\"{}\"] is not the name of a file beside the index", path, it.key()));
    }
    out.emplace(it.key(), it->get<std::string>());
  }
  return out;
}

}  // namespace

Expected<CheckpointTensors> CheckpointTensors::Open(const std::string& dir) {
  CheckpointTensors c;
  std::error_code ec;
  const fs::path single = fs::path(dir) / kSingle;
  const fs::path index = fs::path(dir) / kIndex;
  std::map<std::string, std::string> weight_map;  // empty for a single file
  std::set<std::string> files;
  if (fs::exists(single, ec)) {
    c.source_ = single.string();
    files.insert(kSingle);
  } else if (fs::exists(index, ec)) {
    c.source_ = index.string();
    Expected<std::map<std::string, std::string>> m = ReadWeightMap(c.source_);
    if (!m) return m.error();
    weight_map = *std::move(m);
    for (const auto& [tensor, file] : weight_map) files.insert(file);
  } else {
    return InvalidArgument(fmt::format("{}: no {} or {}", dir, kSingle, kIndex));
  }
  for (const std::string& name : files) {
    Expected<SafetensorsFile> f = SafetensorsFile::Open((fs::path(dir) / name).string());
    if (!f) return f.error();
    SEAM_RETURN_IF_ERROR(c.Add(*std::move(f), name, weight_map));
  }
  for (const auto& [tensor, file] : weight_map) {
    if (!c.by_name_.contains(tensor)) {
      return Malformed(fmt::format("{}: the index maps '{}' to {}, which does not hold it", c.source_, tensor, file));
    }
  }
  return c;
}

// Takes a shard's tensors: each mapped to this file by the index (when there
// is one) and in no other shard.
Status CheckpointTensors::Add(SafetensorsFile f, const std::string& name,
                              const std::map<std::string, std::string>& weight_map) {
  const size_t file = files_.size();
  for (const StTensorInfo& t : f.tensors()) {
    if (!weight_map.empty()) {
      auto it = weight_map.find(t.name);
      if (it == weight_map.end() || it->second != name) {
        return Malformed(fmt::format("{}: tensor '{}' is in {} but the index maps it {}", source_, t.name, name,
                                     it == weight_map.end() ? "nowhere" : "to " + it->second));
      }
    }
    if (!by_name_.emplace(t.name, infos_.size()).second) {
      return Malformed(fmt::format("{}: tensor '{}' is in more than one shard", source_, t.name));
    }
    infos_.push_back(t);
    file_of_.push_back(file);
  }
  files_.push_back(std::move(f));
  return Status::Ok();
}

const StTensorInfo* CheckpointTensors::Find(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &infos_[it->second];
}

const std::string& CheckpointTensors::FileOf(std::string_view name) const {
  auto it = by_name_.find(name);
  SEAM_CHECK(it != by_name_.end(), fmt::format("the checkpoint has no tensor '{}'", name));
  return files_[file_of_[it->second]].path();
}

StTensor CheckpointTensors::Read(std::string_view name) const {
  auto it = by_name_.find(name);
  SEAM_CHECK(it != by_name_.end(), fmt::format("the checkpoint has no tensor '{}'", name));
  return files_[file_of_[it->second]].Read(name);
}

void CheckpointTensors::ReadFloats(std::string_view name, uint64_t first, std::span<float> out) const {
  auto it = by_name_.find(name);
  SEAM_CHECK(it != by_name_.end(), fmt::format("the checkpoint has no tensor '{}'", name));
  files_[file_of_[it->second]].ReadFloats(name, first, out);
}

}  // namespace seam
