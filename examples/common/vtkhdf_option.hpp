// --vtkhdf DIR, shared by the examples: one ParaView time series (io::VtkHdfSeries) when the
// build has HDF5 for MPI (meson defines IRREGULAR_HAVE_VTKHDF), and the option refused otherwise.
#pragma once

#include <irregular/core/error.hpp>
#include <irregular/io/field.hpp>
#ifdef IRREGULAR_HAVE_VTKHDF
#include <irregular/io/vtkhdf_series.hpp>
#endif

#include <optional>
#include <string>

namespace examples {

/// Throws irregular::invalid_argument when a build without HDF5 is given --vtkhdf: refused, never
/// ignored. `who` prefixes the message ("particles: ", or empty).
inline void check_vtkhdf_option([[maybe_unused]] const std::string& dir,
                                [[maybe_unused]] const std::string& who) {
#ifndef IRREGULAR_HAVE_VTKHDF
  if (!dir.empty())
    throw irregular::invalid_argument(who +
                                      "--vtkhdf needs a build with HDF5 for MPI "
                                      "(libhdf5-openmpi-dev; meson setup -Dhdf5=enabled); this "
                                      "one has none");
#endif
}

/// The series of --vtkhdf DIR, named `name`: write() adds a step when a directory was given (in
/// a build with HDF5), and does nothing otherwise.
class OptionalSeries {
 public:
  OptionalSeries([[maybe_unused]] const std::string& dir,
                 [[maybe_unused]] const std::string& name) {
#ifdef IRREGULAR_HAVE_VTKHDF
    if (!dir.empty()) series_.emplace(dir, name);
#endif
  }
  /// Writes `domain` at `time` with the fields `make_fields()` returns (called only when a step
  /// is written). Collective.
  template <class Domain, class MakeFields>
  void write([[maybe_unused]] const Domain& domain, [[maybe_unused]] double time,
             [[maybe_unused]] MakeFields&& make_fields) {
#ifdef IRREGULAR_HAVE_VTKHDF
    if (series_) series_->write(domain, time, make_fields());
#endif
  }
  /// The index ParaView opens, or empty when no series is written.
  [[nodiscard]] std::string index() const {
#ifdef IRREGULAR_HAVE_VTKHDF
    if (series_) return series_->index_path();
#endif
    return {};
  }

 private:
#ifdef IRREGULAR_HAVE_VTKHDF
  std::optional<irregular::io::VtkHdfSeries> series_;
#endif
};

}  // namespace examples
