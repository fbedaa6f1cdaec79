// WaTor's parameters, its counter-based random numbers and the record of one grid occupant
// (baiardi-bounded-neighbours §5, after Dewdney 1984). Standard library only: the distributed
// simulation is in wator.cpp.
#pragma once

#include <irregular/core/error.hpp>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace wator {

/// The defaults are the "coexist" rules of --params: fish and sharks both persist in a
/// predator-prey cycle (Dewdney's breeding ages, few sharks at the start). "paper" is Table 1.
struct Params {
  long long width = 600, height = 300;  ///< the toroidal grid: columns x rows
  long long fish_pct = 30, shark_pct = 3, plankton_pct = 40;  ///< initial share of the cells
  long long fish_survival = 7;    ///< a fish dies after this many steps without plankton
  long long shark_survival = 3;   ///< a shark dies after this many steps without a fish
  long long fish_breed = 3;       ///< a fish that moves at this age leaves a newborn behind
  long long shark_breed = 10;
  long long plankton_regrowth = 3;  ///< steps a grazed plankton patch needs to be ripe again
  long long steps = 200;
  long long seed = 2026;
  long long leaf_capacity = 64;  ///< H-Tree leaves split above this many occupants
  long long progress = 20;       ///< a progress line every k steps (0: none)
  long long balance_every = 1;   ///< a balancing step after every k computation steps
  double threshold = 0.05;       ///< V: remap only when max_unbalance exceeds it
  long long svg_every = 0;       ///< SVG snapshot every k steps (0: first and last only)
};

/// Sets the rules of the ocean (initial shares, survival and breeding ages, regrowth) to a named
/// set; the grid, steps, seed and the rest keep their values. Throws irregular::invalid_argument
/// for another name.
///   coexist  the defaults: 30% fish, 3% sharks, 40% plankton, breeding at 3 (fish) and 10
///            (sharks) as Dewdney's, survival 7 and 3, regrowth 3. Fish outbreed the few sharks,
///            the sharks boom on them and starve once the fish thin out: a cycle of about 50
///            steps in which both persist (600x300 down to 64x48, 200 steps).
///   paper    Table 1 of baiardi-bounded-neighbours: 20% fish, 30% sharks, 30% plankton,
///            breeding at 10 and 12, survival 7 and 3. The sharks die out within about 20 steps.
inline void apply_rules(Params& p, const std::string& name) {
  const Params coexist;
  Params r = coexist;
  if (name == "paper") {
    r.fish_pct = 20, r.shark_pct = 30, r.plankton_pct = 30;
    r.fish_breed = 10, r.shark_breed = 12;
  } else if (name != "coexist") {
    throw irregular::invalid_argument("--params takes coexist or paper, not '" + name + "'");
  }
  p.fish_pct = r.fish_pct, p.shark_pct = r.shark_pct, p.plankton_pct = r.plankton_pct;
  p.fish_survival = r.fish_survival, p.shark_survival = r.shark_survival;
  p.fish_breed = r.fish_breed, p.shark_breed = r.shark_breed;
  p.plankton_regrowth = r.plankton_regrowth;
}

/// Throws irregular::invalid_argument naming the first parameter out of range.
inline void validate(const Params& p) {
  auto fail = [](const std::string& what) { throw irregular::invalid_argument(what); };
  auto range = [&](const char* name, long long v, long long lo, long long hi) {
    if (v < lo || v > hi)
      fail(std::string(name) + " = " + std::to_string(v) + " is outside [" + std::to_string(lo) + ", " +
           std::to_string(hi) + "]");
  };
  range("--width", p.width, 4, 1 << 20);
  range("--height", p.height, 4, 1 << 20);
  if (p.width * p.height > 0x7fffffffLL) fail("the grid has more than 2^31 - 1 cells");
  range("--fish", p.fish_pct, 0, 100);
  range("--sharks", p.shark_pct, 0, 100);
  range("--plankton", p.plankton_pct, 0, 100);
  if (p.fish_pct + p.shark_pct + p.plankton_pct > 100)
    fail("the percentages of fish, sharks and plankton sum to " +
         std::to_string(p.fish_pct + p.shark_pct + p.plankton_pct) +
         " (above 100): each cell starts with at most one of them");
  range("--fish-survival", p.fish_survival, 1, 1000000);
  range("--shark-survival", p.shark_survival, 1, 1000000);
  range("--fish-breed", p.fish_breed, 1, 1000000);
  range("--shark-breed", p.shark_breed, 1, 1000000);
  range("--plankton-regrowth", p.plankton_regrowth, 0, 1000000);
  range("--steps", p.steps, 0, 100000000);
  range("--seed", p.seed, 0, 0x7fffffffffffffffLL);
  range("--leaf-capacity", p.leaf_capacity, 1, 1 << 30);
  range("--progress", p.progress, 0, 100000000);
  range("--balance-every", p.balance_every, 0, 100000000);
  range("--svg-every", p.svg_every, 0, 100000000);
  if (!(p.threshold >= 0 && p.threshold < 1e9)) fail("--threshold must be a number >= 0");
}

/// An integer argument, or irregular::invalid_argument.
inline long long parse_int(const std::string& option, const std::string& text) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE)
    throw irregular::invalid_argument(option + " needs an integer, got '" + text + "'");
  return v;
}
inline double parse_double(const std::string& option, const std::string& text) {
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE)
    throw irregular::invalid_argument(option + " needs a number, got '" + text + "'");
  return v;
}

// ---- counter-based random numbers --------------------------------------------------------------

/// SplitMix64's finalizer: a bijection of 64 bits with full avalanche.
constexpr std::uint64_t mix(std::uint64_t z) noexcept {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// What a random number is for: distinct streams never share a value by construction.
enum class Stream : std::uint64_t { init_kind = 1, init_age, shark_move, fish_move, shark_priority, fish_priority };

/// The random number of (seed, step, cell, stream): the same on every rank that asks, whatever
/// the number of ranks or the order of the questions.
constexpr std::uint64_t random(std::uint64_t seed, std::uint64_t step, std::uint64_t cell, Stream s) noexcept {
  return mix(mix(mix(mix(seed) ^ step) ^ cell) ^ static_cast<std::uint64_t>(s));
}

// ---- the occupants of the grid -----------------------------------------------------------------

enum Kind : std::uint8_t { free_slot = 0, plankton = 1, fish = 2, shark = 3 };

/// Per-step flags of an animal.
enum Flag : std::uint8_t { moved = 1, bred = 2, ate = 4, eaten = 8 };

/// One occupant of a cell: an animal, a plankton patch, or a free slot (the domain keeps its
/// element count between builds, so a dead animal's record waits for the next birth on its rank).
/// Trivially copyable: it travels as raw bytes.
struct Creature {
  std::array<double, 2> position;  ///< centre of `home`: the domain locates the record by it
  std::uint32_t home = 0;          ///< cell at the start of the step (row-major: y * width + x)
  std::uint32_t cell = 0;          ///< cell now (an animal moves at most once per step)
  std::int32_t target = -1;        ///< the proposed cell, or -1 (stays)
  std::uint32_t age = 0;           ///< animals: steps since birth or since the last newborn
  std::uint32_t hunger = 0;        ///< animals: steps since the last meal
  std::uint32_t ripe_at = 0;       ///< plankton: the first step at which it can be eaten
  std::uint8_t kind = free_slot;
  std::uint8_t flags = 0;
};

/// An order-free digest term of one occupant: the ocean's checksum is the sum of the terms of
/// every animal and plankton patch (free slots add nothing).
inline std::uint64_t digest(const Creature& c) noexcept {
  if (c.kind == free_slot) return 0;
  std::uint64_t h = mix(static_cast<std::uint64_t>(c.kind) << 32 | c.home);
  h = mix(h ^ (static_cast<std::uint64_t>(c.age) << 32 | c.hunger));
  return mix(h ^ c.ripe_at);
}

}  // namespace wator
