// _core.Sum: the runtime-width Pauli sum (AnyPauliSum) for the Python package. The public
// paulistrings.PauliSum wraps it; this layer holds whatever needs a loop over terms: label parsing
// with the original's messages, NumPy import/export in key order, arithmetic, read-outs.

#include <pybind11/complex.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "paulistrings/core/any_pauli_sum.h"
#include "paulistrings/readout/observables.h"
#include "paulistrings/readout/product_state.h"
#include "paulistrings/readout/stabilizer_state.h"

namespace py = pybind11;

namespace paulistrings::python {
namespace {

constexpr const char* kTooWide = "num_qubits exceeds largest monomorphized width (1024)";

void check_width(std::size_t num_qubits) {
  if (num_qubits > kMaxSupportedQubits) throw std::invalid_argument(kTooWide);
}

/// Rust's {:?} of a string: the text in double quotes.
std::string quoted(const std::string& text) { return "\"" + text + "\""; }

bool has_digit(const std::string& label) {
  return std::any_of(label.begin(), label.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

/// Dense labels get the original's checks and messages; sparse labels ("X0 Z5") the library's.
void check_dense_label(const std::string& label, std::size_t num_qubits) {
  if (has_digit(label)) return;
  if (label.size() != num_qubits) {
    throw std::invalid_argument("Pauli string " + quoted(label) + " has length " +
                                std::to_string(label.size()) + ", expected " + std::to_string(num_qubits) +
                                " (length must match num_qubits)");
  }
  for (char c : label) {
    if (c != 'I' && c != 'X' && c != 'Y' && c != 'Z') {
      throw std::invalid_argument(std::string("unexpected Pauli character '") + c + "' (expected I/X/Y/Z)");
    }
  }
}

AnyPauliSum from_labels(std::size_t num_qubits, const std::vector<std::string>& labels,
                        const std::vector<Complex>& coefficients) {
  check_width(num_qubits);
  if (labels.size() != coefficients.size()) {
    throw std::invalid_argument("from_strings: " + std::to_string(labels.size()) + " labels but " +
                                std::to_string(coefficients.size()) + " coefficients (lengths must match)");
  }
  std::vector<std::pair<std::string, Complex>> terms;
  terms.reserve(labels.size());
  for (std::size_t i = 0; i < labels.size(); ++i) {
    check_dense_label(labels[i], num_qubits);
    terms.emplace_back(labels[i], coefficients[i]);
  }
  return AnyPauliSum::from_labels(num_qubits, terms);
}

using WordArray = py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>;

/// Checks shapes and returns the words per row.
std::size_t check_arrays(std::size_t num_qubits, const WordArray& x, const WordArray& z,
                         std::size_t coefficients) {
  check_width(num_qubits);
  if (x.ndim() != 2 || z.ndim() != 2) {
    throw std::invalid_argument(
        "from_arrays: x and z must be 2-D arrays of shape (n_terms, words), got shapes with " +
        std::to_string(x.ndim()) + " and " + std::to_string(z.ndim()) + " dimensions");
  }
  if (x.shape(0) != z.shape(0) || x.shape(1) != z.shape(1)) {
    throw std::invalid_argument("from_arrays: x has shape (" + std::to_string(x.shape(0)) + ", " +
                                std::to_string(x.shape(1)) + ") but z has shape (" +
                                std::to_string(z.shape(0)) + ", " + std::to_string(z.shape(1)) + ")");
  }
  const std::size_t rows = static_cast<std::size_t>(x.shape(0));
  const std::size_t words = static_cast<std::size_t>(x.shape(1));
  if (coefficients != rows) {
    throw std::invalid_argument("from_arrays: coefficients has length " + std::to_string(coefficients) +
                                " but x and z have " + std::to_string(rows) + " rows");
  }
  const int width = width_for_qubits(num_qubits);
  if (words < 1 || words > static_cast<std::size_t>(width)) {
    throw std::invalid_argument("from_arrays: arrays have " + std::to_string(words) +
                                " words per row, but the width for " + std::to_string(num_qubits) +
                                " qubits is " + std::to_string(width) + " (1 to " + std::to_string(width) +
                                " words accepted)");
  }
  // Bits at qubits >= num_qubits, with the original's wording (the library would also refuse them).
  const std::uint64_t* xs = x.data();
  const std::uint64_t* zs = z.data();
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t w = 0; w < words; ++w) {
      const std::uint64_t bits = xs[r * words + w] | zs[r * words + w];
      if (bits == 0) continue;
      const std::size_t high = 64 * w + 63 - static_cast<std::size_t>(__builtin_clzll(bits));
      if (high >= num_qubits) {
        throw std::invalid_argument("from_arrays: row " + std::to_string(r) + " has a bit set for qubit " +
                                    std::to_string(high) + ", but num_qubits is " +
                                    std::to_string(num_qubits));
      }
    }
  }
  return words;
}

AnyPauliSum from_arrays_complex(std::size_t num_qubits, const WordArray& x, const WordArray& z,
                                const py::array_t<Complex, py::array::c_style | py::array::forcecast>& c) {
  if (c.ndim() != 1) throw std::invalid_argument("from_arrays: coefficients must be a 1-D array");
  const std::size_t words = check_arrays(num_qubits, x, z, static_cast<std::size_t>(c.shape(0)));
  const std::size_t n = static_cast<std::size_t>(x.size());
  return AnyPauliSum::from_arrays(num_qubits, {x.data(), n}, {z.data(), n}, words,
                                  {c.data(), static_cast<std::size_t>(c.shape(0))});
}

AnyPauliSum from_arrays_real(std::size_t num_qubits, const WordArray& x, const WordArray& z,
                             const py::array_t<double, py::array::c_style | py::array::forcecast>& c) {
  if (c.ndim() != 1) throw std::invalid_argument("from_arrays: coefficients must be a 1-D array");
  const std::size_t words = check_arrays(num_qubits, x, z, static_cast<std::size_t>(c.shape(0)));
  const std::size_t n = static_cast<std::size_t>(x.size());
  AnyPauliSum result(num_qubits, false);
  result.visit([&](auto& sum) {
    using Sum = std::decay_t<decltype(sum)>;
    if constexpr (!Sum::kIsComplex) {
      sum = Sum::from_arrays(num_qubits, {x.data(), n}, {z.data(), n}, words,
                             std::span<const double>(c.data(), static_cast<std::size_t>(c.shape(0))));
    }
  });
  return result;
}

/// Term indices in ascending key order (x words, then z words): the order every accessor uses,
/// independent of the bucket count (the original's order for sums of up to 1024 terms).
template <class Sum>
std::vector<std::size_t> key_order(const Sum& sum, std::size_t first = static_cast<std::size_t>(-1)) {
  std::vector<std::size_t> order(sum.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  if (sum.num_buckets() <= 1) {  // one bucket: canonical order is key order
    if (first < order.size()) order.resize(first);
    return order;
  }
  const auto keys = sum.keys();
  auto less = [&](std::size_t a, std::size_t b) { return keys[a] < keys[b]; };
  if (first < order.size()) {
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(first), order.end(), less);
    order.resize(first);
  } else {
    std::sort(order.begin(), order.end(), less);
  }
  return order;
}

/// (x, z, coefficients) in key order; None for the parts not asked for.
py::tuple export_arrays(const AnyPauliSum& any, bool want_x, bool want_z, bool want_c) {
  return any.visit([&](const auto& sum) -> py::tuple {
    using Sum = std::decay_t<decltype(sum)>;
    constexpr int W = Sum::kWidth;
    const std::vector<std::size_t> order = key_order(sum);
    const std::size_t m = order.size();
    py::object x = py::none(), z = py::none(), c = py::none();
    const auto keys = sum.keys();
    const auto values = sum.coefficients();
    if (want_x || want_z) {
      py::array_t<std::uint64_t> xa({m, static_cast<std::size_t>(W)});
      py::array_t<std::uint64_t> za({m, static_cast<std::size_t>(W)});
      std::uint64_t* xp = xa.mutable_data();
      std::uint64_t* zp = za.mutable_data();
      for (std::size_t i = 0; i < m; ++i) {
        const auto& key = keys[order[i]];
        std::memcpy(xp + i * W, key.x.data(), sizeof(std::uint64_t) * W);
        std::memcpy(zp + i * W, key.z.data(), sizeof(std::uint64_t) * W);
      }
      if (want_x) x = std::move(xa);
      if (want_z) z = std::move(za);
    }
    if (want_c) {
      py::array_t<Complex> ca(m);
      Complex* cp = ca.mutable_data();
      for (std::size_t i = 0; i < m; ++i) cp[i] = Complex(values[order[i]]);
      c = std::move(ca);
    }
    return py::make_tuple(x, z, c);
  });
}

/// The first `count` terms in key order as (dense label, coefficient).
std::vector<std::pair<std::string, Complex>> head_terms(const AnyPauliSum& any, std::size_t count) {
  return any.visit([&](const auto& sum) {
    std::vector<std::pair<std::string, Complex>> out;
    for (std::size_t i : key_order(sum, count)) {
      out.emplace_back(sum.keys()[i].to_label(sum.num_qubits()), Complex(sum.coefficients()[i]));
    }
    return out;
  });
}

/// Real storage whenever every imaginary part is zero (exact; the original's values are unchanged).
void demote_if_real(AnyPauliSum& any) {
  if (!any.is_complex()) return;
  const bool real = any.visit([](const auto& sum) {
    if constexpr (std::decay_t<decltype(sum)>::kIsComplex) {
      for (const Complex& c : sum.coefficients())
        if (c.imag() != 0.0) return false;
    }
    return true;
  });
  if (real) any.make_real();
}

void check_same_qubits(const AnyPauliSum& a, const AnyPauliSum& b, const char* what) {
  if (a.num_qubits() != b.num_qubits()) {
    throw std::invalid_argument(std::string(what) + ": num_qubits mismatch (" +
                                std::to_string(a.num_qubits()) + " vs " + std::to_string(b.num_qubits()) +
                                ")");
  }
}

Complex overlap_of(const AnyPauliSum& a, const AnyPauliSum& b) {
  check_same_qubits(a, b, "overlap");
  return std::visit(
      [](const auto& s, const auto& t) -> Complex {
        if constexpr (std::decay_t<decltype(s)>::kWidth == std::decay_t<decltype(t)>::kWidth) {
          return overlap(s, t);
        } else {
          throw std::logic_error("overlap: sums of equal qubit count hold different widths");
        }
      },
      a.variant(), b.variant());
}

}  // namespace

void register_sum(py::module_& m) {
  py::class_<AnyPauliSum>(m, "Sum", "Runtime-width Pauli sum (internal; use paulistrings.PauliSum).")
      .def(py::init([](std::size_t num_qubits) {
             check_width(num_qubits);
             return AnyPauliSum(num_qubits);
           }),
           py::arg("num_qubits"))
      .def_static("from_labels", &from_labels, py::arg("num_qubits"), py::arg("labels"),
                  py::arg("coefficients"))
      .def_static("from_arrays_complex", &from_arrays_complex)
      .def_static("from_arrays_real", &from_arrays_real)
      .def("copy", [](const AnyPauliSum& s) { return AnyPauliSum(s); })
      .def_property_readonly("num_qubits", &AnyPauliSum::num_qubits)
      .def_property_readonly("width", &AnyPauliSum::width)
      .def_property_readonly("num_buckets", &AnyPauliSum::num_buckets)
      .def_property_readonly("is_complex", &AnyPauliSum::is_complex)
      .def("__len__", &AnyPauliSum::size)
      .def("export", &export_arrays, py::arg("x") = true, py::arg("z") = true, py::arg("c") = true)
      .def("head", &head_terms)
      .def("terms", &AnyPauliSum::terms)
      .def("coefficient", &AnyPauliSum::coefficient)
      .def("identity_coefficient", &AnyPauliSum::identity_coefficient)
      .def("norm_squared", &AnyPauliSum::norm_squared)
      .def("make_complex", &AnyPauliSum::make_complex)
      .def("iadd",
           [](AnyPauliSum& a, const AnyPauliSum& b) {
             check_same_qubits(a, b, "PauliSum +");
             a += b;
             demote_if_real(a);
           })
      .def("isub",
           [](AnyPauliSum& a, const AnyPauliSum& b) {
             check_same_qubits(a, b, "PauliSum -");
             a -= b;
             demote_if_real(a);
           })
      .def("iscale",
           [](AnyPauliSum& a, Complex s) {
             a *= s;
             demote_if_real(a);
           })
      .def("equals", [](const AnyPauliSum& a, const AnyPauliSum& b) { return a == b; })
      .def("expectation",
           [](const AnyPauliSum& any, const std::string& state) {
             const ProductState parsed = ProductState::parse(state, any.num_qubits());
             return any.visit([&](const auto& s) { return Complex(parsed.expectation(s)); });
           })
      .def("expectation_stabilizer",
           [](const AnyPauliSum& any, const std::vector<std::string>& generators) {
             const StabilizerState state = StabilizerState::from_generators(generators, any.num_qubits());
             return any.visit([&](const auto& s) { return Complex(state.expectation(s)); });
           })
      .def("overlap", &overlap_of)
      .def("anticommute_histogram",
           [](const AnyPauliSum& any, const std::vector<std::size_t>& sites, const std::string& axis) {
             return any.visit([&](const auto& s) { return anticommute_histogram(s, sites, axis); });
           })
      .def("rotated_overlap", [](const AnyPauliSum& any, const std::vector<std::size_t>& sites, double delta,
                                 const std::string& axis) {
        return any.visit([&](const auto& s) { return rotated_overlap(s, sites, delta, axis); });
      });

  m.def("diagonal_echo",
        [](const std::vector<double>& histogram, double delta) { return diagonal_echo(histogram, delta); });
}

}  // namespace paulistrings::python
