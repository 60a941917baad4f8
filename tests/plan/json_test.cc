// Plans as JSON: every bound plan reads back to an equal Plan, the writer is a
// fixed point of read-then-write, and a malformed document is an error that
// names the JSON path of the first bad field.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "seam/bind.h"
#include "seam/checked.h"
#include "seam/plan_io.h"
#include "testing.h"

namespace seam {
namespace {

using nlohmann::json;
using testing::MustBind;

struct NamedConfig {
  std::string name;
  ParallelConfig cfg;
};

// The configurations of the round-trip grid; each runs under every reduction.
std::vector<NamedConfig> Grid() {
  const std::vector<NamedConfig> shapes = {
      {"tp2", {.tp = 2}},
      {"tp4 attn_dp2", {.tp = 4, .attn_dp = 2}},
      {"tp4 attn_dp2 dense_tp1 a2a", {.tp = 4, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a}},
      {"tp4 a2a", {.tp = 4, .moe = MoeMode::kA2a}},
      {"tp2 input_scattered", {.tp = 2, .input_scattered = true}},
      {"tp1", {.tp = 1}},
  };
  std::vector<NamedConfig> out;
  for (const NamedConfig& s : shapes) {
    for (Reduction r : {Reduction::kAr, Reduction::kRs, Reduction::kRsv, Reduction::kRsRsv}) {
      out.push_back({s.name + " " + std::string(Name(r)), testing::WithReduction(s.cfg, r)});
    }
  }
  return out;
}

struct Case {
  std::string name;
  Plan plan;
};

// Every catalogue model under every grid configuration that Bind accepts. A
// rejection is skipped; a bound plan that breaks its invariants is a failure.
std::vector<Case> CataloguePlans() {
  std::vector<Case> out;
  for (const CatalogueEntry& e : Catalogue()) {
    const Model m = e.make();
    for (const NamedConfig& c : Grid()) {
      Expected<Plan> p = BindChecked(m, c.cfg, 0);
      const std::string name = e.name + " " + c.name;
      if (!p) {
        EXPECT_NE(p.error().code, ErrorCode::kFailedCheck) << name << ": " << p.error().message;
        continue;
      }
      out.push_back({name, *std::move(p)});
    }
  }
  return out;
}

// Why two plans are not equal, for failure messages: the structural diff,
// plus the raw config fields (Diff prints the config normalised).
std::string WhyUnequal(const Plan& a, const Plan& b) {
  std::string out;
  for (const std::string& d : Diff(a, b)) out += "  " + d + "\n";
  const ParallelConfig& ca = a.config();
  const ParallelConfig& cb = b.config();
  if (!(ca == cb)) {
    out += "  raw config differs: dense_tp " + std::to_string(ca.dense_tp) + " vs " + std::to_string(cb.dense_tp) +
           ", tp " + std::to_string(ca.tp) + " vs " + std::to_string(cb.tp) + ", attn_dp " +
           std::to_string(ca.attn_dp) + " vs " + std::to_string(cb.attn_dp) + "\n";
  }
  if (!(a.lines() == b.lines())) out += "  lines differ\n";
  if (out.empty()) out = "  (no visible difference)\n";
  return out;
}

// The grid is 4 models x 6 shapes x 4 reductions = 96 combinations; all bind
// but nemotron-h input-scattered (its mixer cannot gather its own input).
constexpr size_t kMinCataloguePlans = 92;

TEST(PlanJson, EveryCataloguePlanReadsBackToAnEqualPlan) {
  const std::vector<Case> cases = CataloguePlans();
  ASSERT_GE(cases.size(), kMinCataloguePlans);
  std::vector<std::string> unequal;
  std::string first_reason;
  for (const Case& c : cases) {
    Expected<Plan> back = PlanFromJson(ToJson(c.plan));
    ASSERT_TRUE(back.ok()) << c.name << ": " << back.error().message;
    if (!(*back == c.plan)) {
      if (unequal.empty()) first_reason = WhyUnequal(c.plan, *back);
      unequal.push_back(c.name);
    }
  }
  std::string names;
  for (const std::string& n : unequal) names += "  " + n + "\n";
  EXPECT_TRUE(unequal.empty()) << unequal.size() << " of " << cases.size() << " plans read back unequal:\n"
                               << names << "first difference (" << (unequal.empty() ? "" : unequal[0]) << "):\n"
                               << first_reason;
}

// The part of the round trip below the header: every line, stage and step.
TEST(PlanJson, EveryCataloguePlanReadsBackToEqualLinesAndHeaderFacts) {
  const std::vector<Case> cases = CataloguePlans();
  ASSERT_GE(cases.size(), kMinCataloguePlans);
  for (const Case& c : cases) {
    Expected<Plan> back = PlanFromJson(ToJson(c.plan));
    ASSERT_TRUE(back.ok()) << c.name << ": " << back.error().message;
    EXPECT_TRUE(back->lines() == c.plan.lines()) << c.name << "\n" << WhyUnequal(c.plan, *back);
    const PlanHeader& a = c.plan.header();
    const PlanHeader& b = back->header();
    EXPECT_EQ(b.model, a.model) << c.name;
    EXPECT_EQ(b.hidden, a.hidden) << c.name;
    EXPECT_EQ(b.residual_streams, a.residual_streams) << c.name;
    EXPECT_EQ(b.wire, a.wire) << c.name;
    EXPECT_EQ(b.pp_rank, a.pp_rank) << c.name;
    EXPECT_EQ(b.first_layer, a.first_layer) << c.name;
    EXPECT_EQ(b.last_layer, a.last_layer) << c.name;
    EXPECT_EQ(Describe(b.config), Describe(a.config)) << c.name;
    EXPECT_EQ(b.config.dense_tp_size(), a.config.dense_tp_size()) << c.name;
    EXPECT_TRUE(Diff(c.plan, *back).empty()) << c.name;
  }
}

// The narrowest form of the round trip: the default dense width (dense_tp
// unset) must survive being written as a number.
TEST(PlanJson, DefaultDenseWidthSurvivesTheRoundTrip) {
  const Plan p = MustBind(LlamaModel(2), {.tp = 2});
  Expected<Plan> back = PlanFromJson(ToJson(p));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->config().dense_tp_size(), p.config().dense_tp_size());
  EXPECT_TRUE(*back == p) << WhyUnequal(p, *back);
}

TEST(PlanJson, ExplicitDenseWidthReadsBackToAnEqualPlan) {
  const Plan p = MustBind(DeepseekModel(3, 64, 3), {.tp = 4, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a});
  Expected<Plan> back = PlanFromJson(ToJson(p));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_TRUE(*back == p) << WhyUnequal(p, *back);
  EXPECT_TRUE(Diff(p, *back).empty());
}

TEST(PlanJson, WritingWhatWasReadIsByteIdentical) {
  const std::vector<Case> cases = CataloguePlans();
  ASSERT_GE(cases.size(), kMinCataloguePlans);
  for (const Case& c : cases) {
    const std::string text = ToJson(c.plan);
    Expected<Plan> back = PlanFromJson(text);
    ASSERT_TRUE(back.ok()) << c.name << ": " << back.error().message;
    EXPECT_EQ(ToJson(*back), text) << c.name;
  }
}

TEST(PlanJson, DocumentNamesTheFormatVersionAndEveryHeaderFact) {
  const Plan p = MustBind(DeepseekModel(3, 64, 3), {.tp = 4, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a});
  const json doc = json::parse(ToJson(p));
  EXPECT_EQ(doc["seam_plan"], 3);
  EXPECT_EQ(doc["model"], "deepseek-v2-lite");
  EXPECT_EQ(doc["hidden"], 64);
  EXPECT_EQ(doc["residual_streams"], 1);
  EXPECT_EQ(doc["act_dtype"], "bf16");
  EXPECT_EQ(doc["dispatch_dtype"], "bf16");
  EXPECT_EQ(doc["pp_rank"], 0);
  EXPECT_EQ(doc["layers"], json::array({0, 3}));
  EXPECT_EQ(doc["config"],
            json::parse(R"({"tp": 4, "attn_dp": 2, "cp": 1, "dcp": 1, "dense_tp": 1, "moe": "a2a", "ep": 4,
      "dp_lm_head": false, "input_scattered": false, "reduction": "ar", "pp": 1, "pp_split": []})"));
  ASSERT_EQ(doc["lines"].size(), 1U);
  EXPECT_EQ(doc["lines"][0]["variant"], "ordinary");
  EXPECT_EQ(doc["lines"][0]["stages"].size(), 6U);
  EXPECT_EQ(doc["lines"][0]["bytes_per_token"], 928.0);
}

TEST(PlanJson, InputScatteredPlanWritesBothVariants) {
  const Plan p = MustBind(LlamaModel(2), {.tp = 2, .input_scattered = true});
  const json doc = json::parse(ToJson(p));
  ASSERT_EQ(doc["lines"].size(), 2U);
  EXPECT_EQ(doc["lines"][0]["variant"], "ordinary");
  EXPECT_EQ(doc["lines"][1]["variant"], "input-scattered");
  Expected<Plan> back = PlanFromJson(ToJson(p));
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_NE(back->line(Variant::kInputScattered), nullptr);
  EXPECT_TRUE(*back->line(Variant::kInputScattered) == *p.line(Variant::kInputScattered));
}

// ---- malformed documents ----

// llama [A F][A F] under tp=2: stage 1's entry[0] is ar+add+norm(attn_tp).
json LlamaDoc() { return json::parse(ToJson(MustBind(LlamaModel(2), {.tp = 2}))); }

std::string ErrorOf(const json& doc) {
  Expected<Plan> p = PlanFromJson(doc.dump());
  if (p) return "(read without error)";
  EXPECT_EQ(p.error().code, ErrorCode::kMalformed);
  return p.error().message;
}

TEST(PlanJsonErrors, TextThatIsNotJsonSaysSo) {
  for (const std::string& text : {std::string("{not json"), std::string(""), std::string("{\"seam_plan\": 1,}"),
                                  ToJson(MustBind(LlamaModel(2), {.tp = 2})).substr(0, 100)}) {
    Expected<Plan> p = PlanFromJson(text);
    ASSERT_FALSE(p.ok()) << text;
    EXPECT_EQ(p.error().code, ErrorCode::kMalformed);
    EXPECT_EQ(p.error().message, "the plan is not valid JSON") << text;
  }
}

TEST(PlanJsonErrors, DocumentThatIsNotAnObjectIsNamedAsThePlan) {
  EXPECT_EQ(ErrorOf(json::array({1, 2})), "plan: is not an object");
  EXPECT_EQ(ErrorOf(json(42)), "plan: is not an object");
}

TEST(PlanJsonErrors, MissingTopLevelFieldIsNamed) {
  json doc = LlamaDoc();
  doc.erase("model");
  EXPECT_EQ(ErrorOf(doc), "plan: missing field 'model'");
}

TEST(PlanJsonErrors, MissingNestedFieldNamesItsPath) {
  json doc = LlamaDoc();
  doc["lines"][0]["stages"][1]["entry"][0].erase("width");
  EXPECT_EQ(ErrorOf(doc), "lines[0].stages[1].entry[0]: missing field 'width'");

  doc = LlamaDoc();
  doc["config"].erase("reduction");
  EXPECT_EQ(ErrorOf(doc), "config: missing field 'reduction'");

  doc = LlamaDoc();
  doc["lines"][0]["end"].erase("steps");
  EXPECT_EQ(ErrorOf(doc), "lines[0].end: missing field 'steps'");
}

TEST(PlanJsonErrors, StringWhereAnIntegerBelongsNamesThePath) {
  json doc = LlamaDoc();
  doc["hidden"] = "64";
  EXPECT_EQ(ErrorOf(doc), "hidden: is not an integer");

  doc = LlamaDoc();
  doc["lines"][0]["stages"][3]["decl"]["top_k"] = "3";
  EXPECT_EQ(ErrorOf(doc), "lines[0].stages[3].decl.top_k: is not an integer");

  doc = LlamaDoc();
  doc["config"]["tp"] = 2.5;
  EXPECT_EQ(ErrorOf(doc), "config.tp: is not an integer");
}

TEST(PlanJsonErrors, OtherWrongTypesNameThePath) {
  json doc = LlamaDoc();
  doc["config"]["input_scattered"] = 0;
  EXPECT_EQ(ErrorOf(doc), "config.input_scattered: is not true or false");

  doc = LlamaDoc();
  doc["model"] = 7;
  EXPECT_EQ(ErrorOf(doc), "model: is not a string");

  doc = LlamaDoc();
  doc["lines"][0]["stages"] = json::object();
  EXPECT_EQ(ErrorOf(doc), "lines[0].stages: is not an array");

  doc = LlamaDoc();
  doc["lines"][0]["stages"][0]["arrives"] = json::array();
  EXPECT_EQ(ErrorOf(doc), "lines[0].stages[0].arrives: is not an object");
}

TEST(PlanJsonErrors, OutOfRangeIntegerIsRejected) {
  json doc = LlamaDoc();
  doc["hidden"] = 5'000'000'000LL;
  EXPECT_EQ(ErrorOf(doc), "hidden: is out of range (1 to 1000000000)");
}

// An unsigned integer beyond the signed 64-bit range must not wrap into a
// small negative number that passes the range check.
TEST(PlanJsonErrors, HugeUnsignedIntegerIsOutOfRangeNotWrapped) {
  json doc = LlamaDoc();
  doc["lines"][0]["stages"][1]["entry"][0]["width"] = 18446744073709551615ULL;  // reads as -1 if wrapped
  EXPECT_EQ(ErrorOf(doc), "lines[0].stages[1].entry[0].width: is out of range (0 to 1000000000)");
}

TEST(PlanJsonErrors, UnknownStepNamesThePathAndTheChoices) {
  json doc = LlamaDoc();
  doc["lines"][0]["stages"][2]["entry"][0]["step"] = "frobnicate";
  EXPECT_EQ(ErrorOf(doc),
            "lines[0].stages[2].entry[0].step: unknown step 'frobnicate'; expected one of: ar, rs, rsv, ag, "
            "a2a-dispatch, a2a-combine, slice, start-residual, add, norm, ar+add+norm, compute, embed, lm-head, "
            "ag-vocab, leave, send, recv, ag-kv, ag-q, a2a-lse");
}

TEST(PlanJsonErrors, UnknownEnumValuesNameThePathAndTheChoices) {
  json doc = LlamaDoc();
  doc["lines"][0]["stages"][1]["entry"][0]["group"] = "world";
  EXPECT_EQ(
      ErrorOf(doc),
      "lines[0].stages[1].entry[0].group: unknown group 'world'; expected one of: attn_tp, dp, tp, pp, ep, cp, dcp");

  doc = LlamaDoc();
  doc["lines"][0]["stages"][1]["exit"][0]["rows"][1] = "half";
  EXPECT_EQ(ErrorOf(doc),
            "lines[0].stages[1].exit[0].rows[1]: unknown row layout 'half'; expected one of: full, attn, slice");

  doc = LlamaDoc();
  doc["lines"][0]["end"]["steps"][0]["owes"][0] = "dp";
  EXPECT_EQ(ErrorOf(doc), "lines[0].end.steps[0].owes[0]: unknown owed sum 'dp'; expected one of: -, attn_tp, tp");

  doc = LlamaDoc();
  doc["lines"][0]["variant"] = "sideways";
  EXPECT_EQ(ErrorOf(doc),
            "lines[0].variant: unknown batch variant 'sideways'; expected one of: ordinary, input-scattered");

  doc = LlamaDoc();
  doc["lines"][0]["stages"][0]["decl"]["kind"] = "conv";
  EXPECT_EQ(ErrorOf(doc).rfind("lines[0].stages[0].decl.kind: unknown stage kind 'conv'", 0), 0U) << ErrorOf(doc);
}

TEST(PlanJsonErrors, UnknownConfigEnumNamesThePath) {
  json doc = LlamaDoc();
  doc["config"]["moe"] = "foo";
  EXPECT_EQ(ErrorOf(doc).rfind("config.moe: ", 0), 0U) << ErrorOf(doc);
  EXPECT_NE(ErrorOf(doc).find("foo"), std::string::npos) << ErrorOf(doc);

  doc = LlamaDoc();
  doc["config"]["reduction"] = "xx";
  EXPECT_EQ(ErrorOf(doc).rfind("config.reduction: ", 0), 0U) << ErrorOf(doc);
}

TEST(PlanJsonErrors, RowsWithThreeEntriesNeedInAndOut) {
  json doc = LlamaDoc();
  doc["lines"][0]["stages"][1]["entry"][0]["rows"] = json::array({"full", "full", "full"});
  EXPECT_EQ(ErrorOf(doc), "lines[0].stages[1].entry[0].rows: needs [in, out]");

  doc = LlamaDoc();
  doc["lines"][0]["stages"][1]["entry"][0]["owes"] = json::array({"tp"});
  EXPECT_EQ(ErrorOf(doc), "lines[0].stages[1].entry[0].owes: needs [before, after]");

  doc = LlamaDoc();
  doc["layers"] = json::array({0, 1, 2});
  EXPECT_EQ(ErrorOf(doc), "layers: needs [first, last)");
}

TEST(PlanJsonErrors, ConfigThatFailsValidationNamesTheConfig) {
  json doc = LlamaDoc();
  doc["config"]["tp"] = 6;
  doc["config"]["attn_dp"] = 4;
  EXPECT_EQ(ErrorOf(doc),
            "config: tp=6 is not divisible by attn_dp=4; attn_dp must divide tp (divisors of 6: 1, 2, 3, 6)");

  doc = LlamaDoc();
  doc["config"]["dense_tp"] = 3;
  doc["config"]["tp"] = 4;
  EXPECT_EQ(ErrorOf(doc),
            "config: dense_tp=3 is not a width a dense FFN can run at here; use tp=4 (the TP group) or 1 "
            "(fully data-parallel)");
}

TEST(PlanJsonErrors, ABatchVariantTwiceIsNamed) {
  json doc = LlamaDoc();
  doc["lines"].push_back(doc["lines"][0]);
  EXPECT_EQ(ErrorOf(doc), "lines[1].variant: the plan has this batch variant twice");
}

// Format 2 was written before context parallelism: its config names no cp,
// and it reads as the same plan at cp 1. A format 3 plan names it.
TEST(PlanJson, AFormatTwoPlanWrittenBeforeCpReadsWithCpOne) {
  const Plan p = MustBind(LlamaModel(2), {.tp = 2});
  json doc = json::parse(ToJson(p));
  EXPECT_EQ(doc["seam_plan"], 3);
  EXPECT_EQ(doc["config"]["cp"], 1);
  EXPECT_EQ(doc["config"]["dcp"], 1);
  doc["seam_plan"] = 2;
  doc["config"].erase("cp");
  doc["config"].erase("dcp");
  const Expected<Plan> back = PlanFromJson(doc.dump());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, p);
}

TEST(PlanJsonErrors, WrongFormatVersionIsNamed) {
  json doc = LlamaDoc();
  doc["seam_plan"] = 1;  // element_bytes, before the wire dtypes
  EXPECT_EQ(ErrorOf(doc), "seam_plan: expected format 3 (or 2, written before context parallelism)");

  doc = LlamaDoc();
  doc["seam_plan"] = "1";
  EXPECT_EQ(ErrorOf(doc), "seam_plan: is not an integer");

  doc = LlamaDoc();
  doc.erase("seam_plan");
  EXPECT_EQ(ErrorOf(doc), "plan: missing field 'seam_plan'");
}

TEST(PlanJson, DerivedBytesAreIgnoredWhenRead) {
  const json original = LlamaDoc();
  json doc = original;
  doc["lines"][0]["bytes_per_token"] = 12345.0;
  doc["lines"][0]["stages"][1]["entry"][0]["bytes_per_token"] = -1.0;
  doc["lines"][0]["end"]["steps"][0].erase("bytes_per_token");
  Expected<Plan> edited = PlanFromJson(doc.dump());
  Expected<Plan> plain = PlanFromJson(original.dump());
  ASSERT_TRUE(edited.ok()) << edited.error().message;
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_TRUE(*edited == *plain);
  EXPECT_EQ(ToJson(*edited), ToJson(*plain));
}

TEST(PlanJson, ReaderDoesNotVerify) {
  // A plan with its first sum removed breaks invariant 2 but still reads.
  json doc = LlamaDoc();
  doc["lines"][0]["stages"][1]["entry"].erase(0);
  Expected<Plan> p = PlanFromJson(doc.dump());
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->line(Variant::kOrdinary)->stages[1].entry.size(), 0U);
}

}  // namespace
}  // namespace seam
