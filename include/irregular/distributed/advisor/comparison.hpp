// PartitionerComparison: what compare_partitioners reports for each candidate map, without moving
// any element or datum (dry_run.hpp), and the maps themselves so a user can apply one. Prints as
// markdown and CSV; the same on every rank.
#pragma once

#include <irregular/core/concepts.hpp>
#include <irregular/core/error.hpp>
#include <irregular/distributed/partitioners/registry.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

namespace irregular::advisor {

/// One candidate's map, measured on the live leaves. Counts are exact: they are what applying
/// the map and collecting the ghosts under the domain's stencil would give.
struct CandidateReport {
  std::string name;    ///< the registry's canonical name (partitioner::ByName::canonical_name)
  std::string family;  ///< "SFC", "rectangular" or "bounded neighbours"
  // Balance (loads as the domain's metric gives them).
  double imbalance = 0;   ///< Lmax / Lavg - 1 (0 is perfect; saule-bas-catalyurek §2)
  double bottleneck = 0;  ///< Lmax, the slowest part's load
  /// max(Lavg, heaviest leaf): no map of whole leaves does better.
  double lower_bound = 0;
  /// SFC family: the optimal cut's bottleneck on the same chain; NaN for the other families.
  double optimal_bottleneck = std::numeric_limits<double>::quiet_NaN();
  // Neighbours and ghosts under the stencil: part q is a neighbour of part r when one reads a
  // leaf of the other.
  int neighbours_max = 0;                ///< most neighbour parts of one part
  double neighbours_mean = 0;            ///< their mean over the parts
  std::uint64_t ghost_leaves_max = 0;    ///< most ghost leaves of one part
  std::uint64_t ghost_leaves_total = 0;  ///< ghost leaves of all parts
  std::uint64_t ghost_bytes_max = 0;     ///< most bytes one part receives per ghost exchange
  std::uint64_t ghost_bytes_total = 0;   ///< bytes of one ghost exchange, all parts
  // The remap from the map in force (what the migration counters would report).
  std::uint64_t remap_leaves = 0;    ///< leaves that would move
  std::uint64_t remap_values = 0;    ///< elements (or data) that would move
  std::uint64_t remap_bytes = 0;     ///< bytes the migration would send, all ranks
  std::uint64_t remap_messages = 0;  ///< its messages, all ranks
  /// Whether remap_bytes is exact: values that need serialization are counted at sizeof.
  bool remap_bytes_exact = true;
  double partition_seconds = 0;  ///< computing the map, the slowest rank
  // The cost model's prediction (cost_model.hpp), per step.
  double compute_seconds = 0;    ///< of the part whose compute + exchange is slowest
  double exchange_seconds = 0;   ///< of that part
  double remap_seconds = 0;      ///< the remap, once, before amortization
  double predicted_seconds = 0;  ///< max over parts (compute + exchange) + remap / steps
  // Per part (replicated, p values each), for the model and for plots.
  std::vector<double> part_loads;                ///< load of each part
  std::vector<std::uint64_t> part_ghost_leaves;  ///< ghost leaves of each part
  std::vector<std::uint64_t> part_ghost_bytes;   ///< bytes each part receives per exchange
  std::vector<int> part_neighbours;              ///< neighbour parts of each part
};

/// The candidates in the order asked, their maps, the winner by predicted step time.
template <SpaceFillingCurve C>
struct PartitionerComparison {
  std::vector<CandidateReport> rows;     ///< one per candidate, in the order asked
  std::vector<AnyOwnershipMap<C>> maps;  ///< each candidate's map, as the domain would hold it
  double steps = 0;                      ///< steps the remap was amortized over

  /// The index of the smallest predicted step time (the first of equals); -1 when empty.
  [[nodiscard]] int best() const noexcept {
    int b = -1;
    for (std::size_t k = 0; k < rows.size(); ++k)
      if (b < 0 || rows[k].predicted_seconds < rows[static_cast<std::size_t>(b)].predicted_seconds)
        b = static_cast<int>(k);
    return b;
  }
  /// The row of the partitioner `name` stands for, in any spelling the registry resolves to it
  /// (e.g. "sfc" finds "SFC"); nullptr when there is none or the name is unknown.
  [[nodiscard]] const CandidateReport* find(const std::string& name) const {
    std::string canonical;
    try {
      canonical = partitioner::ByName{name}.template canonical_name<C>();
    } catch (const invalid_argument&) {
      return nullptr;
    }
    for (const auto& r : rows)
      if (r.name == canonical) return &r;
    return nullptr;
  }

  /// A markdown table, one line per candidate (times in milliseconds, bytes in KiB).
  [[nodiscard]] std::string markdown() const {
    std::string s =
        "| candidate | imbalance | neighbours max / mean | ghost leaves max / total | ghost KiB "
        "max / total | remap KiB / messages | map ms | predicted ms/step |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|\n";
    const int b = best();
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const auto& r = rows[k];
      s += "| " + r.name + (static_cast<int>(k) == b ? " (best)" : "") + " | " +
           fixed(r.imbalance, 3) + " | " + std::to_string(r.neighbours_max) + " / " +
           fixed(r.neighbours_mean, 1) + " | " + std::to_string(r.ghost_leaves_max) + " / " +
           std::to_string(r.ghost_leaves_total) + " | " + fixed(kib(r.ghost_bytes_max), 1) + " / " +
           fixed(kib(r.ghost_bytes_total), 1) + " | " + fixed(kib(r.remap_bytes), 1) + " / " +
           std::to_string(r.remap_messages) + " | " + fixed(1e3 * r.partition_seconds, 2) + " | " +
           fixed(1e3 * r.predicted_seconds, 3) + " |\n";
    }
    return s;
  }
  /// CSV with a header line; every field of CandidateReport but the per-part vectors.
  [[nodiscard]] std::string csv() const {
    std::string s =
        "name,family,imbalance,bottleneck,lower_bound,optimal_bottleneck,neighbours_max,"
        "neighbours_mean,ghost_leaves_max,ghost_leaves_total,ghost_bytes_max,ghost_bytes_total,"
        "remap_leaves,remap_values,remap_bytes,remap_messages,remap_bytes_exact,"
        "partition_seconds,compute_seconds,exchange_seconds,remap_seconds,predicted_seconds\n";
    for (const auto& r : rows) {
      s += r.name + "," + r.family + "," + num(r.imbalance) + "," + num(r.bottleneck) + "," +
           num(r.lower_bound) + "," + num(r.optimal_bottleneck) + "," +
           std::to_string(r.neighbours_max) + "," + num(r.neighbours_mean) + "," +
           std::to_string(r.ghost_leaves_max) + "," + std::to_string(r.ghost_leaves_total) + "," +
           std::to_string(r.ghost_bytes_max) + "," + std::to_string(r.ghost_bytes_total) + "," +
           std::to_string(r.remap_leaves) + "," + std::to_string(r.remap_values) + "," +
           std::to_string(r.remap_bytes) + "," + std::to_string(r.remap_messages) + "," +
           (r.remap_bytes_exact ? "1" : "0") + "," + num(r.partition_seconds) + "," +
           num(r.compute_seconds) + "," + num(r.exchange_seconds) + "," + num(r.remap_seconds) +
           "," + num(r.predicted_seconds) + "\n";
    }
    return s;
  }

 private:
  static double kib(std::uint64_t b) { return static_cast<double>(b) / 1024.0; }
  static std::string fixed(double v, int digits) {
    if (std::isnan(v)) return "-";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
  }
  static std::string num(double v) {
    if (std::isnan(v)) return "";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return buf;
  }
};

}  // namespace irregular::advisor
