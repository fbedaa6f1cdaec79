// Stream buffers over byte vectors for Boost binary archives: writing appends to a
// std::vector<char>, reading walks a span, with no std::ostream/istream layer in between.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <span>
#include <streambuf>
#include <vector>

namespace irregular::detail {

/// Appends everything written to a caller-owned vector. The vector's spare room is the put
/// area, so the archive's many small writes are plain copies; finish() trims the unused tail.
class VectorOutBuf : public std::streambuf {
 public:
  explicit VectorOutBuf(std::vector<char>& out) : out_(&out) {
    const std::size_t pos = out.size();
    out.resize(std::max<std::size_t>(out.capacity(), pos + 256));
    setp(out.data() + pos, out.data() + out.size());
  }
  VectorOutBuf(const VectorOutBuf&) = delete;
  VectorOutBuf& operator=(const VectorOutBuf&) = delete;
  ~VectorOutBuf() override { finish(); }

  /// Shrinks the vector to what was written. Idempotent; called by the destructor too.
  void finish() {
    if (out_ != nullptr) out_->resize(static_cast<std::size_t>(pptr() - out_->data()));
    out_ = nullptr;
  }

 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    const auto un = static_cast<std::size_t>(n);
    if (static_cast<std::size_t>(epptr() - pptr()) < un) grow(un);
    std::memcpy(pptr(), s, un);
    advance(un);
    return n;
  }
  int_type overflow(int_type ch) override {
    if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
    const char c = traits_type::to_char_type(ch);
    xsputn(&c, 1);
    return ch;
  }

 private:
  void grow(std::size_t need) {
    const std::size_t pos = static_cast<std::size_t>(pptr() - out_->data());
    out_->resize(std::max(2 * out_->size(), pos + need));
    setp(out_->data() + pos, out_->data() + out_->size());
  }
  // pbump takes an int; large writes re-base the put area instead.
  void advance(std::size_t n) { setp(pptr() + n, epptr()); }

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
    std::memcpy(s, gptr(), static_cast<std::size_t>(k));
    setg(eback(), gptr() + k, egptr());  // not gbump: its int argument caps one read at 2 GiB
    return k;
  }
};

}  // namespace irregular::detail
