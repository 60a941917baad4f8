#include "seam/runtime/dump.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "seam/runtime/hf_checkpoint.h"
#include "seam/runtime/safetensors.h"

namespace seam {
namespace {

StTensor Floats(const std::string& name, MatrixView t, StDtype dtype, bool one_d) {
  StTensor s{.name = name, .dtype = dtype};
  s.shape = one_d ? std::vector<int64_t>{t.cols()} : std::vector<int64_t>{t.rows(), t.cols()};
  s.floats = t.Floats();
  return s;
}

StTensor Ints(const std::string& name, const std::vector<int64_t>& v) {
  return {.name = name, .dtype = StDtype::kI64, .shape = {static_cast<int64_t>(v.size())}, .ints = v};
}

Status WriteInputs(const std::string& path, const Batch& b) {
  std::vector<int64_t> ids, positions, lengths;
  for (const auto& r : b.requests) {
    lengths.push_back(static_cast<int64_t>(r.size()));
    for (size_t p = 0; p < r.size(); ++p) {
      ids.push_back(r[p]);
      positions.push_back(static_cast<int64_t>(p));
    }
  }
  return WriteSafetensors(path,
                          {Ints("input_ids", ids), Ints("positions", positions), Ints("request_lengths", lengths)});
}

}  // namespace

const std::vector<std::string>& DumpFileNames() {
  static const std::vector<std::string> names = {"config.json", "model.safetensors", "weights.safetensors",
                                                 "inputs.safetensors", "outputs.safetensors"};
  return names;
}

Status CheckDumpTarget(const std::string& dir, bool force) {
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::Ok();  // created by the dump
    return InvalidArgument(fmt::format("--dump {}: {}", dir, std::strerror(errno)));
  }
  if (S_ISLNK(st.st_mode)) {
    return InvalidArgument(fmt::format("--dump {} is a symbolic link; give the directory itself", dir));
  }
  if (!S_ISDIR(st.st_mode)) return InvalidArgument(fmt::format("--dump {} exists and is not a directory", dir));
  // Judged by owner and mode, not by access(): root may write anywhere, but
  // a dump never lands in another user's or a read-only directory.
  if (st.st_uid != geteuid()) {
    return InvalidArgument(
        fmt::format("--dump {} belongs to another user (uid {}); seam dumps only into a directory "
                    "of its own user's",
                    dir, st.st_uid));
  }
  if ((st.st_mode & S_IWUSR) == 0) {
    return InvalidArgument(
        fmt::format("--dump {} is read-only (mode {:o}); give a writable directory", dir, st.st_mode & 07777));
  }
  std::error_code ec;
  const bool empty = std::filesystem::is_empty(dir, ec);
  if (ec) return InvalidArgument(fmt::format("--dump {}: {}", dir, ec.message()));
  if (!empty && !force) {
    return InvalidArgument(
        fmt::format("--dump {} is not empty; --force replaces the files of an earlier dump in it", dir));
  }
  bool earlier = false;
  for (const std::string& name : DumpFileNames()) {
    const std::string path = dir + "/" + name;
    if (lstat(path.c_str(), &st) != 0) continue;
    if (!S_ISREG(st.st_mode)) {
      return InvalidArgument(
          fmt::format("--dump {}: {} is not a regular file; seam replaces only its own files", dir, path));
    }
    if (st.st_uid != geteuid()) {
      return InvalidArgument(
          fmt::format("--dump {}: {} belongs to another user (uid {}); seam replaces only its own "
                      "files",
                      dir, path, st.st_uid));
    }
    earlier = true;
  }
  if (!empty && !earlier) {
    return InvalidArgument(
        fmt::format("--dump {} holds no earlier dump (none of {}); --force replaces only an earlier "
                    "dump's files",
                    dir, fmt::join(DumpFileNames(), ", ")));
  }
  return Status::Ok();
}

namespace {

// Writes every file of the dump into `tmp`.
Status WriteAll(const std::string& tmp, const Model& m, const Weights& w, Dtype dtype, const Batch& b,
                const Tensor& hidden, const Tensor& reference, const DumpOptions& options) {
  const StDtype weight_dtype = dtype == Dtype::kBf16 ? StDtype::kBf16 : StDtype::kF32;
  if (HasHfForm(m)) {
    SEAM_RETURN_IF_ERROR(WriteHfCheckpoint(tmp, m, w, dtype));
  } else {
    std::vector<StTensor> tensors;
    for (const auto& [name, t] : w.all()) tensors.push_back(Floats(name, t.view(), weight_dtype, t.rows() == 1));
    SEAM_RETURN_IF_ERROR(WriteSafetensors(tmp + "/weights.safetensors", tensors, {{"model", m.name}}));
  }
  SEAM_RETURN_IF_ERROR(WriteInputs(tmp + "/inputs.safetensors", b));
  std::vector<StTensor> outputs = {Floats("last_hidden_state", hidden, StDtype::kF32, false),
                                   Floats("reference_last_hidden_state", reference, StDtype::kF32, false)};
  if (options.logits != nullptr) outputs.push_back(Floats("logits", *options.logits, StDtype::kF32, false));
  if (!options.next_ids.empty()) outputs.push_back(Ints("next_ids", options.next_ids));
  return WriteSafetensors(tmp + "/outputs.safetensors", outputs,
                          {{"model", m.name}, {"dtype", std::string(Name(dtype))}});
}

// Moves the written files into `dir`: the whole directory when `dir` does
// not exist, else file by file (removing an earlier dump's other files).
Status MoveFiles(const std::string& tmp, const std::string& dir) {
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0) {
    if (rename(tmp.c_str(), dir.c_str()) == 0) return Status::Ok();
    return InvalidArgument(fmt::format("cannot move the dump into {}: {}", dir, std::strerror(errno)));
  }
  for (const std::string& name : DumpFileNames()) {
    const std::string from = tmp + "/" + name, to = dir + "/" + name;
    if (access(from.c_str(), F_OK) == 0) {
      if (rename(from.c_str(), to.c_str()) != 0) {
        return InvalidArgument(fmt::format("cannot move {} into {}: {}", name, dir, std::strerror(errno)));
      }
    } else {
      unlink(to.c_str());  // an earlier dump's file this one does not write
    }
  }
  return Status::Ok();
}

// MoveFiles, and whatever it leaves of the temporary directory removed.
Status MoveIntoPlace(const std::string& tmp, const std::string& dir) {
  Status moved = MoveFiles(tmp, dir);
  std::error_code ec;
  std::filesystem::remove_all(tmp, ec);  // nothing once the whole directory moved
  return moved;
}

}  // namespace

Status DumpRun(const std::string& dir, const Model& m, const Weights& w, Dtype dtype, const Batch& b,
               const Tensor& hidden, const Tensor& reference, const DumpOptions& options) {
  SEAM_RETURN_IF_ERROR(CheckDumpTarget(dir, options.force));
  const std::filesystem::path target(dir);
  std::error_code ec;
  const std::filesystem::path parent = std::filesystem::absolute(target, ec).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec) return InvalidArgument(fmt::format("cannot create {}: {}", parent.string(), ec.message()));
  // A private directory (mode 0700, a fresh name) beside the target: no one
  // else can plant a link or a FIFO where its files are written.
  std::string tmp = (parent / (".seam-dump-" + target.filename().string() + "-XXXXXX")).string();
  if (mkdtemp(tmp.data()) == nullptr) {
    return InvalidArgument(fmt::format("cannot create a directory beside {}: {}", dir, std::strerror(errno)));
  }
  Status written = WriteAll(tmp, m, w, dtype, b, hidden, reference, options);
  if (!written.ok()) {
    std::filesystem::remove_all(tmp, ec);
    return Error{written.error().code, fmt::format("{}; nothing was written to {}", written.error().message, dir)};
  }
  return MoveIntoPlace(tmp, dir);
}

}  // namespace seam
