// A plan run on one thread per rank against the unsharded reference: the
// final hidden states and the logits agree bit for bit.
//
//   run_on_threads            (llama's tiny shape at tp 2, pp 2)
#include <cstdio>

#include "seam/checked.h"
#include "seam/model_source.h"
#include "seam/runtime/exec.h"

int main() {
  seam::Expected<seam::Model> model = seam::ChooseModel("llama", "", 0);
  const seam::ParallelConfig cfg{.tp = 2, .pp = 2};
  seam::Expected<seam::Pipeline> plans = seam::BindPipelineChecked(*model, cfg);
  seam::Expected<seam::Weights> weights = seam::GenerateWeights(*model, /*seed=*/1, seam::Dtype::kF32);
  seam::Expected<seam::Batch> batch = seam::RandomBatch(/*tokens=*/16, /*requests=*/4, model->dims->vocab, 1);
  if (!plans || !weights || !batch) {
    std::fprintf(stderr, "cannot prepare the run\n");
    return 2;
  }
  seam::Expected<seam::RunOutput> out = seam::RunPlans(*model, *plans, *weights, *batch, {});
  seam::Expected<seam::Tensor> ref =
      seam::RunReference(*model, *weights, *batch, seam::NumericsOf(cfg, seam::Dtype::kF32));
  if (!out || !ref) {
    std::fprintf(stderr, "%s\n", (!out ? out.error() : ref.error()).message.c_str());
    return 1;
  }
  const seam::Tensor logits = seam::ReferenceLogits(*ref, *weights, seam::Dtype::kF32);
  const bool same = out->hidden == *ref && out->logits == logits;
  std::printf("llama tp=2 pp=2: %d tokens, hidden %dx%d, logits %dx%d, bit-identical: %s\n", batch->tokens(),
              out->hidden.rows(), out->hidden.cols(), out->logits.rows(), out->logits.cols(), same ? "yes" : "no");
  return same ? 0 : 1;
}
