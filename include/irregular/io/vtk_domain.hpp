// VTK output of a whole distributed domain in one call: the local leaves of a CellDomain or an
// IrregularDomain through io::write_pvtu, with the leaf level and owner rank always included.
#pragma once

#include <irregular/cell_domain.hpp>
#include <irregular/core/cell.hpp>
#include <irregular/domain.hpp>
#include <irregular/io/vtk.hpp>

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace irregular::io {

/// A scalar cell field of a CellDomain computed from each leaf's datum:
/// `{"u", [](const Data& d) { return d.u; }}`.
template <class Data>
struct CellField {
  std::string name;                          ///< array name
  std::function<double(const Data&)> value;  ///< the cell's value from its leaf's datum
};

namespace detail {
template <class Domain>
std::vector<Cell<Domain::dim>> local_cells(const Domain& domain) {
  std::vector<Cell<Domain::dim>> cells(domain.local_tree().size());
  for (std::size_t i = 0; i < cells.size(); ++i) cells[i] = domain.local_tree().cell(i);
  return cells;
}
}  // namespace detail

/// Writes the leaves of a cell-data domain as `<directory>/<name>_<rank>.vtu` pieces and
/// `<directory>/<name>.pvtu`, with cell data `level`, `rank` and one Float64 array per field
/// (field.value applied to every local datum). Throws irregular::collective_error on every rank
/// as io::write_pvtu does, and when a field's function throws on any rank. Collective over the
/// domain's communicator.
template <class Data, class S, class C, class M, class P>
void write_pvtu(const CellDomain<Data, S, C, M, P>& domain, const std::string& directory,
                const std::string& name, const std::vector<CellField<Data>>& fields = {}) {
  const auto data = domain.local_data();
  std::vector<std::vector<double>> values(fields.size());
  mpi::agree(domain.comm(), [&] {
    for (std::size_t k = 0; k < fields.size(); ++k) {
      if (!fields[k].value)
        throw invalid_argument("irregular::io::write_pvtu (rank " +
                               std::to_string(domain.comm().rank()) + "): field \"" +
                               fields[k].name + "\" has no function");
      values[k].reserve(data.size());
      for (const auto& d : data) values[k].push_back(fields[k].value(d));
    }
  });
  std::vector<VtkField> arrays;
  for (std::size_t k = 0; k < fields.size(); ++k) arrays.push_back({fields[k].name, values[k], 1});
  const auto cells = detail::local_cells(domain);
  write_pvtu<C::dim>(domain.comm(), directory, name, domain.box(), C::arity, cells, arrays);
}

/// Writes the leaves of an element domain as `<directory>/<name>_<rank>.vtu` pieces and
/// `<directory>/<name>.pvtu`, with cell data `level`, `rank`, `elements` (the leaf's element
/// count, Float64) and the caller's `fields`, whose values follow the local leaves
/// (local_tree()). Throws irregular::collective_error on every rank as io::write_pvtu does.
/// Collective over the domain's communicator.
template <class E, class S, class C, class M, class P>
void write_pvtu(const IrregularDomain<E, S, C, M, P>& domain, const std::string& directory,
                const std::string& name, const std::vector<VtkField>& fields = {}) {
  const auto counts = domain.local_tree().counts();
  std::vector<double> elements(counts.begin(), counts.end());
  std::vector<VtkField> arrays{{"elements", elements, 1}};
  arrays.insert(arrays.end(), fields.begin(), fields.end());
  const auto cells = detail::local_cells(domain);
  write_pvtu<C::dim>(domain.comm(), directory, name, domain.box(), C::arity, cells, arrays);
}

}  // namespace irregular::io
