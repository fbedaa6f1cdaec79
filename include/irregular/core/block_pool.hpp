// Large blocks that the element and leaf arrays release, kept on the releasing thread for the
// next array of about their size. Their pages are mapped already, so the next remap or move
// writes into them without a page fault per 4 KiB; that halved the default rebalance on the
// p4est anchor mesh (bench/results/anchors.md, "Released arrays are reused"). The
// same idea as the transport's frame pool, for the arrays themselves.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace irregular {

namespace detail {

/// Blocks of at least block_pool_min_bytes are kept, at most block_pool_blocks of them and
/// block_pool_bytes in all; smaller ones are left to the allocator's own free lists.
inline constexpr std::size_t block_pool_min_bytes = std::size_t{64} << 10;
inline constexpr std::size_t block_pool_blocks = 16;
inline constexpr std::size_t block_pool_bytes = std::size_t{256} << 20;

class BlockPool {
 public:
  struct Block {
    void* p = nullptr;
    std::size_t bytes = 0;
  };

  BlockPool() = default;
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;
  ~BlockPool() {
    clear();
    dead() = true;  // arrays destroyed after this thread's pool free their blocks directly
  }

  /// A block of at least `bytes`: the smallest kept one that holds them and is at most twice
  /// their size (a larger one would hold memory the array does not ask for), else a new one.
  static Block take(std::size_t bytes) {
    if (bytes >= block_pool_min_bytes && !dead()) {
      auto& kept = local().blocks_;
      std::size_t best = kept.size();
      for (std::size_t i = 0; i < kept.size(); ++i)
        if (kept[i].bytes >= bytes && kept[i].bytes / 2 <= bytes &&
            (best == kept.size() || kept[i].bytes < kept[best].bytes))
          best = i;
      if (best != kept.size()) {
        const Block b = kept[best];
        kept.erase(kept.begin() + static_cast<std::ptrdiff_t>(best));
        local().held_ -= b.bytes;
        return b;
      }
    }
    return {::operator new(bytes), bytes};
  }

  /// Keeps the block for a later take, evicting the oldest kept ones to stay within the caps,
  /// or frees it.
  static void give(Block b) noexcept {
    if (b.p == nullptr) return;
    if (b.bytes < block_pool_min_bytes || b.bytes > block_pool_bytes || dead()) {
      ::operator delete(b.p);
      return;
    }
    BlockPool& pool = local();
    while (!pool.blocks_.empty() &&
           (pool.blocks_.size() >= block_pool_blocks || pool.held_ + b.bytes > block_pool_bytes)) {
      ::operator delete(pool.blocks_.front().p);
      pool.held_ -= pool.blocks_.front().bytes;
      pool.blocks_.erase(pool.blocks_.begin());
    }
    try {
      pool.blocks_.push_back(b);
      pool.held_ += b.bytes;
    } catch (...) {  // no room to remember it: free it
      ::operator delete(b.p);
    }
  }

  [[nodiscard]] static std::size_t held() noexcept { return dead() ? 0 : local().held_; }

  static void clear_local() noexcept {
    if (!dead()) local().clear();
  }

 private:
  static BlockPool& local() {
    thread_local BlockPool pool;
    return pool;
  }
  static bool& dead() noexcept {
    thread_local bool gone = false;  // trivially destructible: readable after the pool is gone
    return gone;
  }
  void clear() noexcept {
    for (const Block& b : blocks_) ::operator delete(b.p);
    blocks_.clear();
    held_ = 0;
  }

  std::vector<Block> blocks_;  // oldest first
  std::size_t held_ = 0;
};

}  // namespace detail

/// Bytes of released array blocks this thread keeps for reuse (at most 16 blocks and 256 MiB;
/// blocks below 64 KiB are never kept). Local.
[[nodiscard]] inline std::size_t array_blocks_held() noexcept { return detail::BlockPool::held(); }

/// Gives the kept array blocks of this thread back to the system. Local.
inline void release_array_blocks() noexcept { detail::BlockPool::clear_local(); }

}  // namespace irregular
