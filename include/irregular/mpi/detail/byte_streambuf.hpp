// Stream buffers over byte vectors for Boost binary archives: writing appends to a
// std::vector<char>, reading walks a span, with no std::ostream/istream layer in between.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <streambuf>
#include <vector>

namespace irregular::detail {

/// Appends everything written to a caller-owned vector.
class VectorOutBuf : public std::streambuf {
 public:
  explicit VectorOutBuf(std::vector<char>& out) : out_(&out) {}

 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    out_->insert(out_->end(), s, s + n);
    return n;
  }
  int_type overflow(int_type ch) override {
    if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
    out_->push_back(traits_type::to_char_type(ch));
    return ch;
  }

 private:
  std::vector<char>* out_;
};

/// Reads a span of bytes; consumed() tells how far an archive got.
class SpanInBuf : public std::streambuf {
 public:
  explicit SpanInBuf(std::span<const char> in) {
    // std::streambuf wants char*, but the get area is only ever read.
    char* begin = const_cast<char*>(in.data());
    setg(begin, begin, begin + in.size());
  }
  [[nodiscard]] std::size_t consumed() const { return static_cast<std::size_t>(gptr() - eback()); }

 protected:
  std::streamsize xsgetn(char* s, std::streamsize n) override {
    const std::streamsize avail = egptr() - gptr();
    const std::streamsize k = std::min(n, avail);
    std::copy(gptr(), gptr() + k, s);
    setg(eback(), gptr() + k, egptr());  // not gbump: its int argument caps one read at 2 GiB
    return k;
  }
};

}  // namespace irregular::detail
