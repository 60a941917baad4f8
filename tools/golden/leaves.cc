// Leaf-by-leaf comparison of a stored outcome with a bound one: every field
// of every header, boundary, declaration and step, named by its path.
#include <fmt/format.h>

#include "corpus.h"

namespace seam::golden {
namespace {

std::string Text(const std::optional<Rows>& r) { return r ? std::string(Name(*r)) : "none"; }
std::string Text(const std::optional<Group>& g) { return g ? std::string(Name(*g)) : "none"; }
std::string Text(bool b) { return b ? "yes" : "no"; }
std::string Text(int v) { return std::to_string(v); }
std::string Text(const std::string& s) { return s; }
template <class E>
std::string Text(E e) requires std::is_enum_v<E> {
  return std::string(Name(e));
}
std::string Text(Rows r) { return std::string(Name(r)); }
std::string Text(const std::vector<int>& v) { return v.empty() ? "-" : fmt::format("{}", fmt::join(v, "+")); }

class Leaves {
 public:
  explicit Leaves(size_t limit) : limit_(limit) {}

  template <class T>
  void Leaf(const std::string& path, const T& stored, const T& bound) {
    if (stored == bound) return;
    if (out_.size() < limit_) out_.push_back(fmt::format("{}: stored {}, bound {}", path, Text(stored), Text(bound)));
  }

  void Header(const std::string& at, const PlanHeader& a, const PlanHeader& b) {
    Leaf(at + "model", a.model, b.model);
    Leaf(at + "hidden", a.hidden, b.hidden);
    Leaf(at + "residual_streams", a.residual_streams, b.residual_streams);
    Leaf(at + "vocab", a.vocab, b.vocab);
    Leaf(at + "act_dtype", std::string(Name(a.wire.act)), std::string(Name(b.wire.act)));
    Leaf(at + "dispatch_dtype", std::string(Name(a.wire.dispatch)), std::string(Name(b.wire.dispatch)));
    const ParallelConfig& x = a.config;
    const ParallelConfig& y = b.config;
    Leaf(at + "config.tp", x.tp, y.tp);
    Leaf(at + "config.attn_dp", x.attn_dp, y.attn_dp);
    Leaf(at + "config.dense_tp", x.dense_tp, y.dense_tp);
    Leaf(at + "config.moe", x.moe, y.moe);
    Leaf(at + "config.input_scattered", x.input_scattered, y.input_scattered);
    Leaf(at + "config.reduction", x.reduction, y.reduction);
    Leaf(at + "config.pp", x.pp, y.pp);
    Leaf(at + "config.pp_split", x.pp_split, y.pp_split);
    Leaf(at + "pp_rank", a.pp_rank, b.pp_rank);
    Leaf(at + "first_layer", a.first_layer, b.first_layer);
    Leaf(at + "last_layer", a.last_layer, b.last_layer);
  }

  void Steps(const std::string& at, const std::vector<Step>& a, const std::vector<Step>& b) {
    Leaf(at + ".size", static_cast<int>(a.size()), static_cast<int>(b.size()));
    for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
      const std::string p = fmt::format("{}[{}].", at, i);
      Leaf(p + "kind", a[i].kind, b[i].kind);
      Leaf(p + "operand", a[i].operand, b[i].operand);
      Leaf(p + "group", a[i].group, b[i].group);
      Leaf(p + "rows_in", a[i].rows_in, b[i].rows_in);
      Leaf(p + "rows_out", a[i].rows_out, b[i].rows_out);
      Leaf(p + "owed_before", a[i].owed_before, b[i].owed_before);
      Leaf(p + "owed_after", a[i].owed_after, b[i].owed_after);
      Leaf(p + "width", a[i].width, b[i].width);
    }
  }

  void Boundary(const std::string& at, const seam::Boundary& a, const seam::Boundary& b) {
    Leaf(at + ".value", std::string(a.value ? "present" : "none"), std::string(b.value ? "present" : "none"));
    if (a.value && b.value) {
      Leaf(at + ".value.rows", a.value->rows, b.value->rows);
      Leaf(at + ".value.owed", a.value->owed, b.value->owed);
      Leaf(at + ".value.update", a.value->update, b.value->update);
    }
    Leaf(at + ".residual", a.residual, b.residual);
  }

  void Decl(const std::string& at, const StageDecl& a, const StageDecl& b) {
    Leaf(at + "kind", a.kind, b.kind);
    Leaf(at + "attention_sum", a.attention_sum, b.attention_sum);
    Leaf(at + "gathers_input", a.gathers_input, b.gathers_input);
    Leaf(at + "update", a.update, b.update);
    Leaf(at + "read", a.read, b.read);
    Leaf(at + "gather_width", a.gather_width, b.gather_width);
    Leaf(at + "top_k", a.top_k, b.top_k);
    Leaf(at + "a2a", a.a2a, b.a2a);
    Leaf(at + "window", a.window, b.window);
    Leaf(at + "kv_heads", a.kv_heads, b.kv_heads);
    Leaf(at + "ffn_width", a.ffn_width, b.ffn_width);
  }

  void Stage(const std::string& at, const StagePlan& a, const StagePlan& b) {
    Leaf(at + "index", a.index, b.index);
    Leaf(at + "layer", a.layer, b.layer);
    Decl(at + "decl.", a.decl, b.decl);
    Boundary(at + "arrives", a.arrives, b.arrives);
    Leaf(at + "input", a.input, b.input);
    Leaf(at + "residual", a.residual, b.residual);
    Steps(at + "entry", a.entry, b.entry);
    Steps(at + "compute", a.compute, b.compute);
    Steps(at + "exit", a.exit, b.exit);
    Boundary(at + "departs", a.departs, b.departs);
  }

  void Line(const std::string& at, const LinePlan& a, const LinePlan& b) {
    Steps(at + "start", a.start, b.start);
    Leaf(at + "stages.size", static_cast<int>(a.stages.size()), static_cast<int>(b.stages.size()));
    for (size_t i = 0; i < std::min(a.stages.size(), b.stages.size()); ++i) {
      Stage(fmt::format("{}stage {} / ", at, a.stages[i].index), a.stages[i], b.stages[i]);
    }
    Leaf(at + "end.kind", a.end.kind, b.end.kind);
    Boundary(at + "end.arrives", a.end.arrives, b.end.arrives);
    Steps(at + "end.steps", a.end.steps, b.end.steps);
    Steps(at + "end.head", a.end.head, b.end.head);
  }

  void Plan(const std::string& at, const seam::Plan& a, const seam::Plan& b) {
    Header(at, a.header(), b.header());
    for (Variant v : {Variant::kOrdinary, Variant::kInputScattered}) {
      const LinePlan* la = a.line(v);
      const LinePlan* lb = b.line(v);
      const std::string p = fmt::format("{}{}", at, Name(v));
      Leaf(p, std::string(la ? "present" : "none"), std::string(lb ? "present" : "none"));
      if (la && lb) Line(p + " / ", *la, *lb);
    }
    Leaf(at + "lines.size", static_cast<int>(a.lines().size()), static_cast<int>(b.lines().size()));
  }

  std::vector<std::string> Take() { return std::move(out_); }

 private:
  size_t limit_;
  std::vector<std::string> out_;
};

}  // namespace

std::vector<std::string> LeafDifferences(const Expected<Pipeline>& stored, const Expected<Pipeline>& bound,
                                         size_t limit) {
  Leaves d(limit);
  if (!stored || !bound) {
    auto text = [](const Expected<Pipeline>& e) {
      return e ? fmt::format("plans of {} ranks", e->size()) : fmt::format("rejected '{}'", e.error().message);
    };
    if (stored.ok() != bound.ok() || stored.error().message != bound.error().message) {
      d.Leaf(std::string("outcome"), text(stored), text(bound));
    }
    return d.Take();
  }
  d.Leaf(std::string("ranks"), static_cast<int>(stored->size()), static_cast<int>(bound->size()));
  for (size_t r = 0; r < std::min(stored->size(), bound->size()); ++r) {
    d.Plan(fmt::format("rank {} / ", r), (*stored)[r], (*bound)[r]);
  }
  return d.Take();
}

}  // namespace seam::golden
