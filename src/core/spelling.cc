#include "seam/spelling.h"

#include <algorithm>
#include <numeric>

namespace seam {

int EditDistance(std::string_view a, std::string_view b) {
  // One row of the classic table at a time: O(|b|) memory.
  std::vector<int> row(b.size() + 1);
  std::iota(row.begin(), row.end(), 0);
  for (size_t i = 1; i <= a.size(); ++i) {
    int diagonal = row[0];
    row[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      const int up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::optional<std::string> Nearest(std::string_view word, const std::vector<std::string>& names) {
  // Names of hostile length are not compared (the table is quadratic).
  constexpr size_t kLongest = 256;
  if (word.size() > kLongest) return std::nullopt;
  const int allowed = std::max(2, static_cast<int>(word.size()) / 3);
  std::optional<std::string> best;
  int best_distance = allowed + 1;
  for (const std::string& n : names) {
    if (n.size() > kLongest) continue;
    const int d = EditDistance(word, n);
    if (d < best_distance) {
      best_distance = d;
      best = n;
    }
  }
  return best;
}

}  // namespace seam
