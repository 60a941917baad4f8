// seam/dump.h — what a run writes for other tools, and checkpoints it reads.
//
// A dump directory holds the weights, the inputs and the final hidden
// states as safetensors files. For the llama family the weights are a
// Hugging Face checkpoint (config.json + model.safetensors with HF names),
// and the final hidden states are HF's last_hidden_state for the dumped
// input_ids and positions.
//
//   inputs.safetensors:  input_ids [tokens] I64, positions [tokens] I64,
//                        request_lengths [requests] I64 (tokens are requests in order)
//   outputs.safetensors: last_hidden_state [tokens, hidden] F32 (the run),
//                        reference_last_hidden_state [tokens, hidden] F32
//   model.safetensors + config.json (llama), or weights.safetensors (others)
#pragma once

#include <string>

#include "seam/batch.h"
#include "seam/model.h"
#include "seam/tensor.h"
#include "seam/weights.h"

namespace seam {

Status DumpRun(const std::string& dir, const Model& m, const Weights& w, Dtype dtype, uint64_t seed,
               const Batch& b, const Tensor& hidden, const Tensor& reference);

// A llama model and its weights from a Hugging Face checkpoint directory.
struct LoadedModel {
  Model model;
  Weights weights;
  Dtype dtype = Dtype::kF32;
};
Expected<LoadedModel> LoadLlama(const std::string& dir);

}  // namespace seam
