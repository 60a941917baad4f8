// A Chrome trace read for a few of its events: nlohmann's SAX events built
// into values as core/strict_json.h builds them, each event of the list
// kept or dropped as soon as it closes.
#include "trace/chrome_json.h"

#include <fmt/format.h>

#include <set>

#include "core/strict_json.h"
#include "seam/printable.h"

namespace seam {
namespace {

using nlohmann::json;

// The root object's keys worth keeping; the rest ("deviceProperties",
// "traceName", ...) are dropped as they are read.
bool KeptKey(std::string_view key) { return key == "traceEvents" || key == "distributedInfo"; }

class Filter {
 public:
  explicit Filter(const std::function<bool(const json&)>& keep) : keep_(keep) {}

  bool null() { return Scalar(json(nullptr)); }
  bool boolean(bool v) { return Scalar(json(v)); }
  bool number_integer(json::number_integer_t v) { return Scalar(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return Scalar(json(v)); }
  bool number_float(json::number_float_t v, const json::string_t& /*text*/) { return Scalar(json(v)); }
  bool string(json::string_t& v) { return Scalar(json(std::move(v))); }
  bool binary(json::binary_t& v) { return Scalar(json::binary(std::move(v))); }
  bool start_object(std::size_t /*size*/) { return Open(json::object(), true); }
  bool start_array(std::size_t /*size*/) { return Open(json::array(), false); }
  bool end_object() {
    keys_.pop_back();
    return Close();
  }
  bool end_array() { return Close(); }
  bool key(json::string_t& k) {
    if (!keys_.back().insert(k).second) {
      // The key as text safe to print, and no longer than a name.
      return Refuse(
          fmt::format("key \"{}\" appears twice in one object", Printable(std::string_view(k).substr(0, 64))));
    }
    key_ = std::move(k);
    return true;
  }
  bool parse_error(std::size_t position, const std::string& /*token*/, const json::exception& /*e*/) {
    return Refuse(fmt::format("is not JSON (at byte {})", position));
  }

  ChromeTrace Take() && {
    ChromeTrace t;
    if (!error_.empty()) {
      t.error = std::move(error_);
      return t;
    }
    if (events_ == nullptr) {
      t.error = "is neither an object with a \"traceEvents\" list nor a list of events";
      return t;
    }
    if (root_.is_object() && root_.contains("distributedInfo"))
      t.distributed_info = std::move(root_["distributedInfo"]);
    json& list = *events_;
    for (size_t i = 0; i < kept_.size(); ++i) t.events.emplace_back(kept_[i], std::move(list[i]));
    return t;
  }

 private:
  // Places v in the open container (or as the document) and returns where it
  // lives: a container's last element stays put while it is open.
  json* Put(json v) {
    if (open_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    json& parent = *open_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(v));
      return &parent.back();
    }
    return &(parent[key_] = std::move(v));
  }

  bool InEvents() const { return events_ != nullptr && !open_.empty() && open_.back() == events_; }
  bool AtTop() const { return open_.size() == 1 && root_.is_object(); }

  bool Scalar(json v) {
    if (InEvents()) {
      ++count_;  // an event that is not an object: none to keep
      return true;
    }
    if (AtTop() && !KeptKey(key_)) return true;
    Put(std::move(v));
    return true;
  }

  bool Open(json container, bool object) {
    if (open_.size() >= static_cast<size_t>(kMaxJsonDepth)) {
      return Refuse(fmt::format("nests deeper than {} levels", kMaxJsonDepth));
    }
    // The events: the document itself when it is a list, else the root
    // object's "traceEvents".
    const bool events = !object && events_ == nullptr && (open_.empty() || (AtTop() && key_ == "traceEvents"));
    top_keys_.push_back(AtTop() ? key_ : std::string());
    json* at = Put(std::move(container));
    open_.push_back(at);
    if (events) events_ = at;
    if (object) keys_.emplace_back();
    return true;
  }

  bool Close() {
    const std::string key = std::move(top_keys_.back());
    top_keys_.pop_back();
    open_.pop_back();
    if (InEvents()) {
      // An event closed: kept, or dropped at once.
      json& list = *events_;
      ++count_;
      if (keep_(list.back())) {
        kept_.push_back(count_);
      } else {
        list.erase(list.size() - 1);
      }
    } else if (AtTop() && !KeptKey(key)) {
      root_.erase(key);
    }
    return true;
  }

  bool Refuse(std::string message) {
    error_ = std::move(message);
    return false;
  }

  const std::function<bool(const json&)>& keep_;
  json root_;
  std::vector<json*> open_;
  std::vector<std::string> top_keys_;        // for each open container, its key in the root object
  std::vector<std::set<std::string>> keys_;  // the keys of each open object
  std::string key_;
  json* events_ = nullptr;
  int64_t count_ = 0;          // the events read so far
  std::vector<int64_t> kept_;  // the place of each kept event
  std::string error_;
};

}  // namespace

ChromeTrace ReadChromeTrace(std::string_view text, const std::function<bool(const json&)>& keep) {
  Filter filter(keep);
  // strict: nothing but white space may follow the document.
  json::sax_parse(text, &filter, json::input_format_t::json, /*strict=*/true);
  return std::move(filter).Take();
}

}  // namespace seam
