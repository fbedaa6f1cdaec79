// Text format for load arrays (the instances of saule-bas-catalyurek §4): a header line
// "irregular-loads D n1 ... nD", then the loads row-major, whitespace separated; '#' starts a
// comment.
#pragma once

#include <irregular/core/error.hpp>
#include <irregular/rect/load_matrix.hpp>

#include <array>
#include <cctype>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <fstream>
#include <istream>
#include <limits>
#include <ostream>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace irregular::detail {

/// Reads whitespace-separated tokens, skipping comments, remembering the line of each token.
class TokenReader {
 public:
  explicit TokenReader(std::istream& in) : in_(in) {}
  bool next(std::string& tok) {
    while (true) {
      while (pos_ < line_.size() && std::isspace(static_cast<unsigned char>(line_[pos_]))) ++pos_;
      if (pos_ < line_.size() && line_[pos_] != '#') {
        const std::size_t b = pos_;
        while (pos_ < line_.size() && !std::isspace(static_cast<unsigned char>(line_[pos_])) &&
               line_[pos_] != '#')
          ++pos_;
        tok = line_.substr(b, pos_ - b);
        return true;
      }
      if (!std::getline(in_, line_)) return false;
      ++lineno_;
      pos_ = 0;
    }
  }
  [[nodiscard]] std::size_t line() const noexcept { return lineno_; }

 private:
  std::istream& in_;
  std::string line_;
  std::size_t pos_ = 0, lineno_ = 0;
};

template <class T>
bool parse_value(const std::string& tok, T& out) {
  errno = 0;
  char* end = nullptr;
  if constexpr (std::is_floating_point_v<T>) {
    const long double v = std::strtold(tok.c_str(), &end);
    if (end != tok.c_str() + tok.size() || errno != 0) return false;
    out = static_cast<T>(v);
    return true;
  } else if constexpr (std::is_signed_v<T>) {
    const long long v = std::strtoll(tok.c_str(), &end, 10);
    if (end != tok.c_str() + tok.size() || errno != 0 || tok.empty()) return false;
    if (v < static_cast<long long>(std::numeric_limits<T>::min()) ||
        v > static_cast<long long>(std::numeric_limits<T>::max()))
      return false;
    out = static_cast<T>(v);
    return true;
  } else {
    if (tok.empty() || tok[0] == '-') return false;
    const unsigned long long v = std::strtoull(tok.c_str(), &end, 10);
    if (end != tok.c_str() + tok.size() || errno != 0) return false;
    if (v > static_cast<unsigned long long>(std::numeric_limits<T>::max())) return false;
    out = static_cast<T>(v);
    return true;
  }
}

}  // namespace irregular::detail

namespace irregular::rect {

/// Writes `g` in the text format (one line per row of the last dimension).
template <class T, int D>
void save_loads(std::ostream& out, const LoadGrid<T, D>& g) {
  out << "irregular-loads " << D;
  for (int d = 0; d < D; ++d) out << ' ' << g.extent(d);
  out << '\n';
  if constexpr (std::is_floating_point_v<T>) out.precision(17);
  const std::size_t row = g.extent(D - 1);
  const auto& v = g.values();
  for (std::size_t i = 0; i < v.size(); ++i) {
    if constexpr (sizeof(T) == 1)
      out << static_cast<int>(v[i]);
    else
      out << v[i];
    out << ((i + 1) % row == 0 ? '\n' : ' ');
  }
}

/// Reads a D-dimensional load array. Throws irregular::parse_error naming the line for a bad
/// header, a malformed or out-of-range number, too few or too many values; a negative or NaN
/// load gets irregular::invalid_argument (from LoadGrid) naming the cell.
template <class T, int D>
LoadGrid<T, D> load_loads(std::istream& in) {
  irregular::detail::TokenReader r(in);
  std::string tok;
  auto fail = [&](const std::string& what) -> void {
    throw parse_error("irregular::rect::load_loads: line " + std::to_string(r.line()) + ": " +
                      what);
  };
  if (!r.next(tok) || tok != "irregular-loads")
    fail("expected the header 'irregular-loads D n1 ...'");
  int dim = 0;
  if (!r.next(tok) || !irregular::detail::parse_value(tok, dim) || dim != D)
    fail("expected dimension " + std::to_string(D) + " in the header, got '" + tok + "'");
  std::array<std::size_t, D> n{};
  std::size_t cells = 1;
  for (int d = 0; d < D; ++d) {
    if (!r.next(tok) || !irregular::detail::parse_value(tok, n[d]) || n[d] == 0)
      fail("bad extent '" + tok + "' for dimension " + std::to_string(d));
    cells *= n[d];
  }
  std::vector<T> v(cells);
  for (std::size_t i = 0; i < cells; ++i) {
    if (!r.next(tok))
      fail("expected " + std::to_string(cells) + " loads, found " + std::to_string(i));
    if (!irregular::detail::parse_value(tok, v[i])) fail("malformed load '" + tok + "'");
  }
  if (r.next(tok)) fail("unexpected trailing token '" + tok + "'");
  return LoadGrid<T, D>(n, std::move(v));
}

/// Writes `g` to the file `path`. Throws irregular::error when it cannot be opened or written.
template <class T, int D>
void save_loads(const std::string& path, const LoadGrid<T, D>& g) {
  std::ofstream f(path);
  if (!f) throw error("irregular::rect::save_loads: cannot open " + path);
  save_loads(f, g);
  if (!f) throw error("irregular::rect::save_loads: write failed for " + path);
}
/// Reads a load array from the file `path`. Throws irregular::error when it cannot be opened,
/// irregular::parse_error (naming the file) when it is malformed.
template <class T, int D>
LoadGrid<T, D> load_loads(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw error("irregular::rect::load_loads: cannot open " + path);
  try {
    return load_loads<T, D>(f);
  } catch (const parse_error& e) {
    throw parse_error(path + ": " + e.what());
  }
}

}  // namespace irregular::rect
