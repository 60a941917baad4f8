// seam/runtime/checkpoint.h — the tensors of a Hugging Face checkpoint directory:
// model.safetensors, or the shard files that model.safetensors.index.json
// names in its "weight_map" (tensor name -> file in the same directory).
// Files are mapped and tensors decoded one at a time, when asked.
//
//   Expected<CheckpointTensors> t = CheckpointTensors::Open("Llama-3.1-8B");
//   if (const StTensorInfo* i = t->Find("model.norm.weight")) ... t->Read(i->name) ...
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "seam/runtime/safetensors.h"

namespace seam {

class CheckpointTensors {
 public:
  // Validates the index (shard names are plain file names in `dir`; every
  // tensor it maps is in its file and every tensor of a shard is mapped to
  // it) and every shard's header.
  static Expected<CheckpointTensors> Open(const std::string& dir);
  // Where the tensors are described: model.safetensors or the index file.
  const std::string& source() const { return source_; }
  const std::vector<StTensorInfo>& tensors() const { return infos_; }  // file by file, in data order
  const StTensorInfo* Find(std::string_view name) const;
  // The file holding `name` (which must exist), for messages.
  const std::string& FileOf(std::string_view name) const;
  StTensor Read(std::string_view name) const;
  // Elements [first, first + out.size()) of an F32 or BF16 tensor, as floats.
  void ReadFloats(std::string_view name, uint64_t first, std::span<float> out) const;

 private:
  Status Add(SafetensorsFile f, const std::string& name, const std::map<std::string, std::string>& weight_map);

  std::string source_;
  std::vector<SafetensorsFile> files_;
  std::vector<StTensorInfo> infos_;
  std::vector<size_t> file_of_;                         // per info: its index in files_
  std::map<std::string, size_t, std::less<>> by_name_;  // name -> index in infos_
};

}  // namespace seam
