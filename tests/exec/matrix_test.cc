// The bit-identity matrix: every catalogue family across the grid of
// configurations in fp32 and bf16 (tp 1/2/4/8, attention DP, input-scattered
// batches, a fully data-parallel dense FFN, a2a MoE, every boundary
// reduction, every pipeline split up to four ranks, fused and unfused
// add+norm), each bit-identical to the unsharded reference.
#include <gtest/gtest.h>

#include "seam/matrix.h"

namespace seam {
namespace {

class BitIdentityMatrix : public ::testing::TestWithParam<CatalogueEntry> {};

TEST_P(BitIdentityMatrix, EveryConfigurationEqualsTheReferenceBitForBit) {
  const Model m = GetParam().make();
  const Expected<std::vector<MatrixRow>> rows = RunMatrix(m, MatrixCases(m), {.tokens = 12, .requests = 3});
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  int identical = 0;
  for (const MatrixRow& r : *rows) {
    if (r.outcome == MatrixOutcome::kSkipped) {
      // Only input-scattered batches on a model with mixers are rejected.
      EXPECT_TRUE(r.c.cfg.input_scattered) << r.c.name << ": " << r.note;
      EXPECT_NE(r.note.find("(rule: input-scattered eligibility)"), std::string::npos) << r.note;
      continue;
    }
    EXPECT_EQ(r.outcome, MatrixOutcome::kIdentical) << r.c.name << ": max |diff| " << r.max_diff;
    ++identical;
  }
  EXPECT_GT(identical, 300);
}

// TP-MoE sums each token's experts inside every canonical K-block before the
// tree over blocks; an a2a MoE runs each expert whole (its own tree, rounded
// to storage) and sums the experts after. Same math, another order: the two
// agree within rounding, not bit for bit.
TEST_P(BitIdentityMatrix, A2aAndTpMoeDifferOnlyWithinTolerance) {
  const Model m = GetParam().make();
  const Expected<std::vector<MatrixPair>> pairs = RunMatrixPairs(m, {.tokens = 12, .requests = 3});
  ASSERT_TRUE(pairs.ok()) << pairs.error().message;
  for (const MatrixPair& p : *pairs) EXPECT_LE(p.max_diff, p.tolerance) << p.name;
}

INSTANTIATE_TEST_SUITE_P(Catalogue, BitIdentityMatrix, ::testing::ValuesIn(Catalogue()), [](const auto& i) {
  std::string n = i.param.name;
  for (char& c : n) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return n;
});

}  // namespace
}  // namespace seam
