// A time series of VTKHDF files that ParaView opens as one: `<name>_<step>.vtkhdf` per output
// step and the index `<name>.vtkhdf.series` (ParaView's JSON file-series format, which its VTKHDF
// reader serves) listing each complete file with its time. The index is rewritten under a
// temporary name and renamed after every step, so a run that crashes leaves a readable series of
// the steps it finished.
#pragma once

#include <irregular/core/error.hpp>
#include <irregular/io/vtkhdf.hpp>
#include <irregular/mpi/collective_error.hpp>

#include <boost/mpi/communicator.hpp>

#include <charconv>
#include <cmath>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace irregular::io {

/// The steps of one series in `directory` (created if missing by the first write). Every rank
/// holds the same object state; write() is collective.
class VtkHdfSeries {
 public:
  /// A series named `name` (a plain file name) in `directory`. Local: nothing is written yet.
  VtkHdfSeries(std::string directory, std::string name)
      : directory_(std::move(directory)), name_(std::move(name)) {}

  /// Writes `domain` (and `fields`, as write_vtkhdf) as the next step, at `time`, then the index
  /// with every step so far. Throws the same irregular::collective_error on every rank when any
  /// rank fails (write_vtkhdf's errors, a time that is not finite or not after the last step's, a
  /// directory that cannot be created, an index that cannot be written); then the series is as
  /// before: the index lists the earlier steps only. Collective over the domain's communicator.
  template <class Domain, class... Fields>
  void write(const Domain& domain, double time, const Fields&... fields) {
    const auto& comm = domain.comm();
    const std::string where =
        "irregular::io::VtkHdfSeries::write (rank " + std::to_string(comm.rank()) + ")";
    const std::string file = name_ + "_" + std::to_string(times_.size()) + ".vtkhdf";
    const std::filesystem::path dir(directory_);
    mpi::agree(comm, [&] {
      if (name_.empty() || name_.find('/') != std::string::npos)
        throw invalid_argument(where + ": name \"" + name_ + "\" must be a plain file name");
      if (!std::isfinite(time) || (!times_.empty() && !(time > times_.back())))
        throw invalid_argument(where + ": time " + std::to_string(time) +
                               " must be finite and after the last step's");
      if (comm.rank() != 0) return;
      std::error_code ec;
      std::filesystem::create_directories(dir, ec);
      if (!std::filesystem::is_directory(dir, ec))
        throw error(where + ": cannot create the directory " + directory_);
    });
    write_vtkhdf(domain, (dir / file).string(), fields...);
    files_.push_back(file);
    times_.push_back(time);
    try {
      mpi::agree(comm, [&] {
        if (comm.rank() == 0) write_index(where);
      });
    } catch (...) {
      files_.pop_back();
      times_.pop_back();
      throw;
    }
  }

  /// The index's path: open it in ParaView.
  [[nodiscard]] std::string index_path() const {
    return (std::filesystem::path(directory_) / (name_ + ".vtkhdf.series")).string();
  }
  /// The files of the steps written so far, relative to the directory.
  [[nodiscard]] const std::vector<std::string>& files() const noexcept { return files_; }
  /// The times of the steps written so far.
  [[nodiscard]] const std::vector<double>& times() const noexcept { return times_; }

 private:
  void write_index(const std::string& where) const {
    std::string text = "{\n  \"file-series-version\" : \"1.0\",\n  \"files\" : [\n";
    for (std::size_t k = 0; k < files_.size(); ++k) {
      char buf[32];
      const auto r = std::to_chars(buf, buf + sizeof buf, times_[k]);
      text += "    { \"name\" : \"" + files_[k] +
              "\", \"time\" : " + std::string(buf, static_cast<std::size_t>(r.ptr - buf)) + " }" +
              (k + 1 < files_.size() ? ",\n" : "\n");
    }
    text += "  ]\n}\n";
    const std::string path = index_path(), tmp = path + ".part";
    {
      std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
      f.write(text.data(), static_cast<std::streamsize>(text.size()));
      f.close();
      if (!f) {
        std::error_code ec;
        std::filesystem::remove(tmp, ec);
        throw error(where + ": cannot write " + tmp);
      }
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) throw error(where + ": cannot rename " + tmp + " to " + path + ": " + ec.message());
  }

  std::string directory_, name_;
  std::vector<std::string> files_;
  std::vector<double> times_;
};

}  // namespace irregular::io
