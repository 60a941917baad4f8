// seam/dump.h — what a run writes for other tools, and checkpoints it reads.
//
// A dump directory holds the weights, the inputs and the final hidden
// states as safetensors files. For every family transformers implements the
// weights are a Hugging Face checkpoint (seam/hf_checkpoint.h), and the
// final hidden states are HF's last_hidden_state for the dumped input_ids and
// positions.
//
//   inputs.safetensors:  input_ids [tokens] I64, positions [tokens] I64,
//                        request_lengths [requests] I64 (tokens are requests in order)
//   outputs.safetensors: last_hidden_state [tokens, hidden] F32 (the run),
//                        reference_last_hidden_state [tokens, hidden] F32
//   config.json + model.safetensors (a Hugging Face checkpoint), or
//   weights.safetensors under seam's names for a family without one (mhc)
#pragma once

#include <string>
#include <string_view>

#include "seam/batch.h"
#include "seam/model.h"
#include "seam/tensor.h"
#include "seam/weights.h"

namespace seam {

// `source_config` is the config.json the model was imported from (empty for
// a catalogue model): its keys seam does not read are kept in the dump's.
Status DumpRun(const std::string& dir, const Model& m, const Weights& w, Dtype dtype, uint64_t seed,
               const Batch& b, const Tensor& hidden, const Tensor& reference, std::string_view source_config = {});

// A model and its weights.
struct LoadedModel {
  Model model;
  Weights weights;
  Dtype dtype = Dtype::kF32;
};

}  // namespace seam
