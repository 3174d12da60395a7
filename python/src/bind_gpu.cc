// _core.DeviceSum: a Pauli sum resident on one CUDA device (paulistrings.GpuPauliSum wraps it), and
// the module's CUDA queries (cuda, cuda_device_count, cuda_unavailable_reason, describe_device).
//
// AnyDeviceSum follows AnyPauliSum: a std::variant over the ten gpu::DeviceSum<W, C> (W ∈ {1, 2, 4, 8,
// 16} words, real or complex coefficients), chosen by the host sum it is uploaded from and dispatched
// once per call. Every call that touches the device runs with the GIL released and holds the sum's
// mutex, so that two Python threads never drive one device sum at once (the GIL is given up before
// the mutex is taken: a running propagate re-enters Python between layers for Ctrl-C).
//
// Errors: gpu::GpuUnavailable and gpu::GpuError are std::runtime_error (→ RuntimeError);
// gpu::GpuOutOfMemory is translated to MemoryError in module.cc.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <variant>

#include "paulistrings/core/any_pauli_sum.h"
#include "paulistrings/gpu/allocation_faults.h"
#include "paulistrings/gpu/device_sum.h"
#include "paulistrings/run/memory_budget.h"
#include "paulistrings/run/propagate.h"
#include "propagate_run.h"

namespace py = pybind11;

namespace paulistrings::python {
namespace {

class AnyDeviceSum {
 public:
  using Variant =
      std::variant<gpu::DeviceSum<1, double>, gpu::DeviceSum<2, double>, gpu::DeviceSum<4, double>,
                   gpu::DeviceSum<8, double>, gpu::DeviceSum<16, double>, gpu::DeviceSum<1, Complex>,
                   gpu::DeviceSum<2, Complex>, gpu::DeviceSum<4, Complex>, gpu::DeviceSum<8, Complex>,
                   gpu::DeviceSum<16, Complex>>;

  /// Uploads `host` (its width and coefficient type) to device `device`.
  AnyDeviceSum(const AnyPauliSum& host, int device)
      : sum_(host.visit([&](const auto& s) -> Variant {
          using Sum = std::decay_t<decltype(s)>;
          return Variant(std::in_place_type<gpu::DeviceSum<Sum::kWidth, typename Sum::Coeff>>, s, device);
        })),
        width_(host.width()) {}
  AnyDeviceSum(const AnyDeviceSum&) = delete;
  AnyDeviceSum& operator=(const AnyDeviceSum&) = delete;

  bool is_complex() const { return sum_.index() >= 5; }
  /// Words per Pauli string (1, 2, 4, 8 or 16), as the host sum's.
  int width() const { return width_; }

  template <class F>
  decltype(auto) visit(F&& f) {
    return std::visit(std::forward<F>(f), sum_);
  }
  template <class F>
  decltype(auto) visit(F&& f) const {
    return std::visit(std::forward<F>(f), sum_);
  }

  /// Runs f() with the GIL released and the sum's mutex held.
  template <class F>
  decltype(auto) locked(F&& f) const {
    check_not_reentered();
    py::gil_scoped_release release;
    Lock lock(*this);
    return f();
  }
  /// Runs f() with the sum's mutex held, for a caller that has released the GIL already.
  template <class F>
  decltype(auto) under_lock(F&& f) const {
    check_not_reentered();
    Lock lock(*this);
    return f();
  }

 private:
  /// The mutex, and the thread that holds it (so that a call from inside the holder's own run, a
  /// logging handler of its propagate, fails instead of deadlocking).
  struct Lock {
    explicit Lock(const AnyDeviceSum& sum) : sum_(sum), guard_(sum.mutex_) {
      sum_.owner_ = std::this_thread::get_id();
    }
    ~Lock() { sum_.owner_ = std::thread::id(); }
    const AnyDeviceSum& sum_;
    std::lock_guard<std::mutex> guard_;
  };
  void check_not_reentered() const {
    if (owner_.load() == std::this_thread::get_id()) {
      throw std::runtime_error(
          "GpuPauliSum: the sum is being propagated by this thread (a logging handler of its own propagate "
          "cannot use it)");
    }
  }

  Variant sum_;
  int width_ = 1;
  mutable std::mutex mutex_;
  mutable std::atomic<std::thread::id> owner_{};
};

/// Uploads with the GIL released; complex_coefficients uploads a real sum with complex storage.
std::unique_ptr<AnyDeviceSum> upload(const AnyPauliSum& host, int device, bool complex_coefficients) {
  if (device < 0) {
    throw std::invalid_argument(
        std::string("device must be a CUDA device ordinal ≥ 0, got ").append(std::to_string(device)));
  }
  py::gil_scoped_release release;
  if (complex_coefficients && !host.is_complex()) {
    AnyPauliSum copy(host);
    copy.make_complex();
    return std::make_unique<AnyDeviceSum>(copy, device);
  }
  return std::make_unique<AnyDeviceSum>(host, device);
}

AnyPauliSum download(const AnyDeviceSum& any) {
  return any.locked([&] { return any.visit([](const auto& s) { return AnyPauliSum(s.download()); }); });
}

/// A real resident sum cannot take complex transfer amplitudes (the host path converts; a resident
/// sum is not re-uploaded behind the caller's back).
void check_real_sum_fits(const AnyDeviceSum& any, const Circuit& circuit) {
  if (any.is_complex()) return;
  for (std::size_t k = 0; k < circuit.size(); ++k) {
    if (!circuit[k].has_complex_transfer()) continue;
    throw std::invalid_argument(
        std::string("GpuPauliSum.propagate: gate ")
            .append(std::to_string(k))
            .append(" (")
            .append(circuit[k].description())
            .append(") has complex transfer amplitudes, but this resident sum has real coefficients; "
                    "upload a complex-coefficient copy instead: "
                    "PauliSum.to_device(device, complex_coefficients=True)"));
  }
}

py::dict propagate_resident(AnyDeviceSum& any, const Circuit& circuit, const Truncation& policy,
                            const std::string& direction, std::size_t target_bucket_len,
                            std::size_t min_buckets, bool keep_records, py::object layer_callback,
                            bool poll_signals, std::optional<std::size_t> memory_limit, bool auto_truncate) {
  const std::size_t qubits =
      any.locked([&] { return any.visit([](const auto& s) { return s.num_qubits(); }); });
  if (qubits != circuit.num_qubits()) {
    throw std::invalid_argument(std::string("GpuPauliSum.num_qubits (")
                                    .append(std::to_string(qubits))
                                    .append(") != Circuit.num_qubits (")
                                    .append(std::to_string(circuit.num_qubits()))
                                    .append(")"));
  }
  check_real_sum_fits(any, circuit);
  RunArguments args;
  args.direction = direction;
  args.target_bucket_len = target_bucket_len;
  args.min_buckets = min_buckets;
  args.keep_records = keep_records;
  args.layer_callback = std::move(layer_callback);
  args.poll_signals = poll_signals;
  // memory_limit: bytes of device memory (run/memory_budget.h), as PauliSum.propagate(device=...) has it.
  std::size_t max_terms = 0;
  if (memory_limit)
    max_terms = device_budget_terms(*memory_limit, any.width(), any.is_complex(), "memory_limit");
  // run_propagation has released the GIL already: under_lock, not locked().
  return run_propagation(circuit, policy, args, [&](const PropagateOptions& given) {
    PropagateOptions options = given;
    options.max_terms = max_terms;
    options.auto_truncate = auto_truncate;
    return any.under_lock(
        [&] { return any.visit([&](auto& s) { return gpu::propagate(s, circuit, options); }); });
  });
}

}  // namespace

void register_gpu(py::module_& m) {
  m.attr("cuda") = gpu::built_with_cuda();
  m.def("cuda_device_count", &gpu::device_count, "Usable CUDA devices (0 without CUDA or without a device).");
  m.def("cuda_unavailable_reason", &gpu::unavailable_reason,
        "Why cuda_device_count() is 0 (empty otherwise).");
  m.def("describe_device", &gpu::describe_device, py::arg("device"));
  // Tests only (python/tests/test_memory.py): from the k-th device allocation of the GPU engine on, every
  // one fails as if the device were full (gpu/allocation_faults.h); 0 turns it off.
  m.def(
      "_fail_device_allocations_from", [](std::uint64_t k) { gpu::AllocationFaults::fail_from(k); },
      py::arg("k"));

  py::class_<AnyDeviceSum>(m, "DeviceSum",
                           "A Pauli sum resident on a CUDA device (internal; use paulistrings.GpuPauliSum).")
      .def(py::init(&upload), py::arg("host"), py::arg("device"), py::arg("complex_coefficients") = false)
      .def("download", &download)
      .def("__len__",
           [](const AnyDeviceSum& any) {
             return any.locked([&] { return any.visit([](const auto& s) { return s.size(); }); });
           })
      .def_property_readonly(
          "num_qubits",
          [](const AnyDeviceSum& any) {
            return any.locked([&] { return any.visit([](const auto& s) { return s.num_qubits(); }); });
          })
      .def_property_readonly(
          "device",
          [](const AnyDeviceSum& any) {
            return any.locked([&] { return any.visit([](const auto& s) { return s.device(); }); });
          })
      .def_property_readonly(
          "device_bytes",
          [](const AnyDeviceSum& any) {
            return any.locked([&] { return any.visit([](const auto& s) { return s.device_bytes(); }); });
          })
      .def_property_readonly(
          "peak_device_bytes",
          [](const AnyDeviceSum& any) {
            return any.locked([&] { return any.visit([](const auto& s) { return s.peak_device_bytes(); }); });
          })
      .def_property_readonly(
          "skipped_layers",
          [](const AnyDeviceSum& any) {
            return any.locked([&] { return any.visit([](const auto& s) { return s.skipped_layers(); }); });
          })
      .def_property_readonly("width", &AnyDeviceSum::width)
      .def_property_readonly("is_complex", &AnyDeviceSum::is_complex)
      .def("propagate", &propagate_resident, py::arg("circuit"), py::arg("policy"), py::arg("direction"),
           py::arg("target_bucket_len"), py::arg("min_buckets"), py::arg("keep_records"),
           py::arg("layer_callback"), py::arg("poll_signals"), py::arg("memory_limit") = py::none(),
           py::arg("auto_truncate") = true);
}

}  // namespace paulistrings::python
