// A reader of Gmsh .msh files (ASCII, format 2.2 and 4.1) that keeps what an unstructured loop
// needs: node coordinates and the edges of the elements (kaddoura-ranka-1995 §5, Figure 9).
// Malformed or truncated files raise irregular::parse_error naming the file and the line.
#pragma once

#include <irregular/core/error.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <istream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace meshloop {

struct Mesh {
  std::vector<std::array<double, 3>> nodes;          ///< coordinates, in file order
  std::vector<std::array<std::int64_t, 2>> edges;    ///< element edges as node positions (repeats possible)
  bool planar = true;                                ///< every z is 0
};

namespace detail {

class Lines {
 public:
  Lines(std::istream& in, std::string name) : in_(in), name_(std::move(name)) {}
  // The next line, or a parse_error naming `expecting` at end of file.
  std::string_view next(const char* expecting) {
    if (!std::getline(in_, line_)) fail("unexpected end of file (truncated?) while reading " + std::string(expecting), line_no_ + 1);
    ++line_no_;
    if (!line_.empty() && line_.back() == '\r') line_.pop_back();
    return line_;
  }
  bool next_or_eof() {
    if (!std::getline(in_, line_)) return false;
    ++line_no_;
    if (!line_.empty() && line_.back() == '\r') line_.pop_back();
    return true;
  }
  [[nodiscard]] std::string_view line() const noexcept { return line_; }
  [[nodiscard]] long number() const noexcept { return line_no_; }
  [[noreturn]] void fail(const std::string& what, long at = -1) const {
    throw irregular::parse_error(name_ + ":" + std::to_string(at < 0 ? line_no_ : at) + ": " + what);
  }

 private:
  std::istream& in_;
  std::string name_, line_;
  long line_no_ = 0;
};

// Whitespace-separated numbers of one line.
class Fields {
 public:
  Fields(const Lines& lines, std::string_view s) : lines_(lines), s_(s) {}
  template <class V>
  V get(const char* what) {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t')) ++pos_;
    V v{};
    const char* b = s_.data() + pos_;
    const char* e = s_.data() + s_.size();
    auto [ptr, ec] = std::from_chars(b, e, v);
    if (ec != std::errc() || ptr == b || (ptr != e && *ptr != ' ' && *ptr != '\t'))
      lines_.fail("expected " + std::string(what) + ", found '" + std::string(s_.substr(pos_, 20)) + "'");
    pos_ = static_cast<std::size_t>(ptr - s_.data());
    return v;
  }

 private:
  const Lines& lines_;
  std::string_view s_;
  std::size_t pos_ = 0;
};

// Corner nodes and edges of the first-order shape of a Gmsh element type.
struct Shape {
  int nodes = -1;  // nodes listed for the element (higher-order ones included)
  std::vector<std::array<int, 2>> edges;
};
inline Shape shape_of(int type) {
  switch (type) {
    case 15: return {1, {}};                                          // point
    case 1: return {2, {{0, 1}}};                                     // line
    case 8: return {3, {{0, 1}}};                                     // line, 2nd order
    case 2: return {3, {{0, 1}, {1, 2}, {2, 0}}};                     // triangle
    case 9: return {6, {{0, 1}, {1, 2}, {2, 0}}};                     // triangle, 2nd order
    case 3: return {4, {{0, 1}, {1, 2}, {2, 3}, {3, 0}}};             // quadrangle
    case 4: return {4, {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}}};  // tetrahedron
    case 5:
      return {8, {{0, 1}, {1, 2}, {2, 3}, {3, 0}, {4, 5}, {5, 6}, {6, 7}, {7, 4}, {0, 4}, {1, 5}, {2, 6}, {3, 7}}};
    default: return {};
  }
}

struct TagMap {
  std::vector<std::pair<std::int64_t, std::int64_t>> by_tag;  // (tag, position), sorted after finish()
  void finish(const Lines& lines) {
    std::sort(by_tag.begin(), by_tag.end());
    for (std::size_t i = 1; i < by_tag.size(); ++i)
      if (by_tag[i].first == by_tag[i - 1].first) lines.fail("node tag " + std::to_string(by_tag[i].first) + " appears twice");
  }
  std::int64_t find(std::int64_t tag, const Lines& lines) const {
    const auto it = std::lower_bound(by_tag.begin(), by_tag.end(), std::pair<std::int64_t, std::int64_t>{tag, INT64_MIN});
    if (it == by_tag.end() || it->first != tag) lines.fail("element refers to unknown node tag " + std::to_string(tag));
    return it->second;
  }
};

inline void add_element(Mesh& m, const TagMap& tags, const Lines& lines, int type, Fields& f) {
  const Shape sh = shape_of(type);
  if (sh.nodes < 0) lines.fail("unsupported element type " + std::to_string(type));
  std::array<std::int64_t, 8> node{};
  for (int k = 0; k < sh.nodes; ++k) {
    const auto t = f.template get<std::int64_t>("a node tag");
    if (k < 8) node[static_cast<std::size_t>(k)] = tags.find(t, lines);
  }
  for (const auto& [a, b] : sh.edges) m.edges.push_back({node[static_cast<std::size_t>(a)], node[static_cast<std::size_t>(b)]});
}

inline void expect(Lines& lines, std::string_view want) {
  if (lines.next(std::string(want).c_str()) != want) lines.fail("expected " + std::string(want));
}

}  // namespace detail

/// Parses a .msh stream; `name` prefixes error messages ("name:line: what").
inline Mesh read_msh(std::istream& in, const std::string& name) {
  detail::Lines lines(in, name);
  Mesh m;
  detail::TagMap tags;
  int major = 0;
  bool have_nodes = false, have_elements = false;
  while (lines.next_or_eof()) {
    const std::string_view l = lines.line();
    if (l.empty()) continue;
    if (l == "$MeshFormat") {
      const std::string_view v = lines.next("the format version");
      detail::Fields f(lines, v);
      const auto version = f.get<double>("a format version");
      const auto file_type = f.get<int>("a file type");
      if (file_type != 0) lines.fail("binary .msh files are not supported (save as ASCII)");
      major = static_cast<int>(version);
      if (major != 2 && major != 4) lines.fail("unsupported .msh version " + std::string(v.substr(0, 8)));
      detail::expect(lines, "$EndMeshFormat");
    } else if (l == "$Nodes") {
      if (major == 0) lines.fail("$Nodes before $MeshFormat");
      if (major == 2) {
        detail::Fields h(lines, lines.next("the node count"));
        const auto count = h.get<std::int64_t>("the node count");
        if (count < 0) lines.fail("negative node count");
        m.nodes.reserve(static_cast<std::size_t>(count));
        for (std::int64_t i = 0; i < count; ++i) {
          detail::Fields f(lines, lines.next("a node"));
          const auto tag = f.get<std::int64_t>("a node tag");
          std::array<double, 3> x{};
          for (auto& c : x) c = f.get<double>("a coordinate");
          tags.by_tag.emplace_back(tag, static_cast<std::int64_t>(m.nodes.size()));
          m.nodes.push_back(x);
        }
      } else {
        detail::Fields h(lines, lines.next("the node header"));
        const auto blocks = h.get<std::int64_t>("the number of node blocks");
        const auto count = h.get<std::int64_t>("the node count");
        if (blocks < 0 || count < 0) lines.fail("negative node counts");
        m.nodes.reserve(static_cast<std::size_t>(count));
        for (std::int64_t bl = 0; bl < blocks; ++bl) {
          detail::Fields bh(lines, lines.next("a node block header"));
          bh.get<int>("the entity dimension");
          bh.get<int>("the entity tag");
          const auto parametric = bh.get<int>("the parametric flag");
          const auto in_block = bh.get<std::int64_t>("the block's node count");
          if (parametric != 0) lines.fail("parametric nodes are not supported");
          const std::size_t first = m.nodes.size();
          for (std::int64_t i = 0; i < in_block; ++i) {
            detail::Fields f(lines, lines.next("a node tag"));
            tags.by_tag.emplace_back(f.get<std::int64_t>("a node tag"), static_cast<std::int64_t>(m.nodes.size()));
            m.nodes.push_back({});
          }
          for (std::int64_t i = 0; i < in_block; ++i) {
            detail::Fields f(lines, lines.next("node coordinates"));
            for (auto& c : m.nodes[first + static_cast<std::size_t>(i)]) c = f.get<double>("a coordinate");
          }
        }
        if (static_cast<std::int64_t>(m.nodes.size()) != count)
          lines.fail("the node blocks hold " + std::to_string(m.nodes.size()) + " nodes, the header says " +
                     std::to_string(count));
      }
      detail::expect(lines, "$EndNodes");
      tags.finish(lines);
      have_nodes = true;
    } else if (l == "$Elements") {
      if (!have_nodes) lines.fail("$Elements before $Nodes");
      if (major == 2) {
        detail::Fields h(lines, lines.next("the element count"));
        const auto count = h.get<std::int64_t>("the element count");
        for (std::int64_t i = 0; i < count; ++i) {
          detail::Fields f(lines, lines.next("an element"));
          f.get<std::int64_t>("an element tag");
          const auto type = f.get<int>("an element type");
          const auto ntags = f.get<int>("the number of tags");
          for (int t = 0; t < ntags; ++t) f.get<std::int64_t>("a tag");
          detail::add_element(m, tags, lines, type, f);
        }
      } else {
        detail::Fields h(lines, lines.next("the element header"));
        const auto blocks = h.get<std::int64_t>("the number of element blocks");
        for (std::int64_t bl = 0; bl < blocks; ++bl) {
          detail::Fields bh(lines, lines.next("an element block header"));
          bh.get<int>("the entity dimension");
          bh.get<int>("the entity tag");
          const auto type = bh.get<int>("the element type");
          const auto in_block = bh.get<std::int64_t>("the block's element count");
          for (std::int64_t i = 0; i < in_block; ++i) {
            detail::Fields f(lines, lines.next("an element"));
            f.get<std::int64_t>("an element tag");
            detail::add_element(m, tags, lines, type, f);
          }
        }
      }
      detail::expect(lines, "$EndElements");
      have_elements = true;
    } else if (l.size() > 1 && l[0] == '$') {
      // A section this reader does not need ($Entities, $PhysicalNames, ...): skip to its end.
      const std::string end = "$End" + std::string(l.substr(1));
      const long opened = lines.number();
      while (lines.next(("the end of the section opened at line " + std::to_string(opened)).c_str()) != end) {
      }
    } else {
      lines.fail("unexpected text outside a section");
    }
  }
  if (!have_nodes || !have_elements) lines.fail(std::string("missing $") + (have_nodes ? "Elements" : "Nodes") + " section", lines.number() + 1);
  for (const auto& x : m.nodes) m.planar = m.planar && x[2] == 0.0;
  return m;
}

/// Reads a .msh file; throws irregular::parse_error (file name and line) or irregular::error when
/// the file cannot be opened.
inline Mesh read_msh_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw irregular::error("cannot open mesh file '" + path + "'");
  return read_msh(in, path);
}

}  // namespace meshloop
