// seam/runtime/dump.h — what a run writes for other tools, and checkpoints it reads.
//
// A dump directory holds the weights, the inputs and the final hidden
// states as safetensors files. For every family transformers implements the
// weights are a Hugging Face checkpoint (seam/runtime/hf_checkpoint.h), and the
// final hidden states are HF's last_hidden_state for the dumped input_ids and
// positions.
//
//   inputs.safetensors:  input_ids [tokens] I64, positions [tokens] I64,
//                        request_lengths [requests] I64 (tokens are requests in order)
//   outputs.safetensors: last_hidden_state [tokens, hidden] F32 (the run),
//                        reference_last_hidden_state [tokens, hidden] F32,
//                        logits [tokens, vocabulary] F32 (the run's LM head),
//                        next_ids [tokens] I64 (a generation: the token each
//                        row's logits chose greedily, -1 inside a prompt)
//   config.json + model.safetensors (a Hugging Face checkpoint), or
//   weights.safetensors under seam's names for a family without one (mhc)
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "seam/model.h"
#include "seam/runtime/batch.h"
#include "seam/runtime/tensor.h"
#include "seam/runtime/weights.h"

namespace seam {

struct DumpOptions {
  // Replace the files of an earlier dump in a non-empty directory (only
  // seam's own file names; anything else there is left alone).
  bool force = false;
  const Tensor* logits = nullptr;  // the run's logits, when it has an LM head
  std::vector<int64_t> next_ids;   // a generation's (empty otherwise)
};

// The files are written into a fresh private directory beside `dir` and
// moved into place once all are written, so a failure (a full disk) leaves
// the earlier dump or nothing. `dir` must not exist, or be an empty
// directory, or (with force) a directory whose seam files are regular files;
// a symbolic link is refused wherever it is met.
Status DumpRun(const std::string& dir, const Model& m, const Weights& w, Dtype dtype, const Batch& b,
               const Tensor& hidden, const Tensor& reference, const DumpOptions& options = {});
// The checks DumpRun makes of `dir` before writing, to run before the work
// whose results it will hold.
Status CheckDumpTarget(const std::string& dir, bool force);
// The file names a dump writes.
const std::vector<std::string>& DumpFileNames();

// A model and its weights.
struct LoadedModel {
  Model model;
  Weights weights;
  Dtype dtype = Dtype::kF32;
};

}  // namespace seam
