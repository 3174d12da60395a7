#pragma once
// Task JSON: the original crate's schema v1 (docs/design.md §9, docs/cli.md), read unchanged — every v1
// file runs and means the same — plus this project's extensions, all optional:
//   "observables": {"name": {label: coeff, …}, …}   several named observables (with or instead of
//                                                    v1's "observable", which is named "observable")
//   sparse labels ("Z62", "X13 Y9 Z8") wherever a label is accepted
//   "truncation": {"top_n": int, "approx_top_n": int} beside v1's max_weight / min_abs_coeff
//   "run": {"threads": int (0 = all cores), "device": "cpu"|"gpu"|"auto"|int, "engine": "cpu"|"column",
//           "partitions": int (a power of two: in-process partitions, partition/),
//           "partition_rows": {"policy": "seeded" | "seeded_excluding" | "cut", "seed": int,
//                              "excluded_qubits": [q, …] (seeded_excluding), "blocks": [[q, …], …]
//                              (cut: one block per partition), "basis": "z" | "x" (cut)},
//           "nccl": bool (GPU ranks under mpirun swap rows with NCCL),
//           "route_orbits_from": int (remote dense two-qubit layers move whole orbits to one partition
//                                 from this many terms in the largest partition; 0 = always),
//           "state": uniform name ("z+") or per-qubit label ("0+r1…"), or a list of per-qubit names}
//   gates beyond v1's vocabulary, named as Circuit's factories: sx sxdg cy iswap iswapdg ecr rxx ryy
//   rzz (+theta); measurement and reset: "measure" and "reset" / "reset_x" / "reset_y" (one channel per
//   listed qubit), "measure_pauli" (+pauli: one product over the listed qubits); and "stim_file"
//   circuits (resolved relative to the task file); "qasm_file" circuits (the same, with "params": {name:
//   value} for OpenQASM 3 inputs; observables may then name qubits by register: "Zq[3]");
//   run.ignore_measure (bool).
//   "sweep": {"th": [v1, …, vK], …}  a parameter sweep (K ≥ 1 columns; every list of one length K; the
//                                    values finite numbers): a gate's numeric field ("theta", "p",
//                                    "gamma", "px", …) may name a parameter ("theta": "th"), and column k
//                                    is the circuit with every such field at the parameter's k-th value;
//                                    every parameter must be used. A "qasm_file" circuit's "params"
//                                    may name parameters too ("params": {"t": "th"}: the file read once
//                                    per column); a sweep with a "stim_file" circuit is refused.
//   "gradient": ["th", …]              with a "sweep": the derivative of every value with respect to these
//                                    sweep parameters (each named once, each named by some gate field;
//                                    not amplitude_damping's gamma, whose transfer is not affine, nor a
//                                    parameter that only a "qasm_file"'s "params" use).
// Unknown keys, unknown gates, missing or ill-typed fields throw io::ParseError naming the file and
// the field path ("circuit.gates[3].theta: expected a number").

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "paulistrings/channels/channel.h"
#include "paulistrings/circuit/circuit.h"
#include "paulistrings/io/observable_spec.h"
#include "paulistrings/truncation/truncation.h"

namespace paulistrings::io {

struct TaskTruncation {
  std::optional<std::size_t> max_weight;
  std::optional<double> min_abs_coeff;
  std::optional<std::size_t> top_n;
  std::optional<std::size_t> approx_top_n;

  /// Every given criterion combined with `&` (v1: weight & coeff); Truncation() when none is given.
  Truncation policy() const;
};

/// How a partitioned run chooses its partition rows (PartitionOptions::row_policy and its fields).
struct TaskPartitionRows {
  std::string policy = "seeded";  ///< "seeded", "seeded_excluding" or "cut"
  std::optional<std::uint64_t> seed;
  std::vector<std::size_t> excluded_qubits;
  std::vector<std::vector<std::size_t>> blocks;
  char basis = 'z';
  bool operator==(const TaskPartitionRows&) const = default;
};

/// A parameter sweep: K values of each named parameter (column k takes every parameter's k-th value).
struct TaskSweep {
  std::vector<std::string> names;           ///< in file order
  std::vector<std::vector<double>> values;  ///< values[i]: names[i]'s K values
  bool empty() const { return names.empty(); }
  std::size_t columns() const { return values.empty() ? 0 : values[0].size(); }
  bool operator==(const TaskSweep&) const = default;
};

/// A gate field naming a sweep parameter: field `field` ("theta", "p", …) of the circuit's channel
/// `channel` takes the values of `parameter`.
struct SweepBinding {
  std::size_t channel = 0;
  std::string field;
  std::string parameter;
  bool operator==(const SweepBinding&) const = default;
};

struct NamedObservable {
  std::string name;
  ObservableTerms terms;
};

struct Task {
  int version = 1;
  std::size_t num_qubits = 0;
  Circuit circuit{0};
  /// v1's "observable" (named "observable") first, then "observables" in file order. May be empty:
  /// then the caller must supply one (the CLI's --observable).
  std::vector<NamedObservable> observables;
  TaskTruncation truncation;
  Direction direction = Direction::heisenberg;  ///< required in the file (v1 has no default)
  int threads = 1;                              ///< v1 default 1; 0 = every allowed core
  std::string device = "cpu";                   ///< "cpu", "gpu", "auto" or a device index
  std::string engine = "cpu";                   ///< the host engine: "cpu" or "column" (docs/design.md §7.5)
  bool column_phase = true;                     ///< "cpu" starts on the column engine (engine/options.h)
  std::size_t partitions = 1;                   ///< in-process partitions (a power of two)
  TaskPartitionRows partition_rows;             ///< rows of a partitioned run (seeded by default)
  bool nccl = false;                            ///< GPU ranks swap rows with NCCL
  /// PartitionOptions::route_orbits_from (unset: the library's default).
  std::optional<std::uint64_t> route_orbits_from;
  std::string state = "z+";                     ///< uniform name or per-qubit label
  /// run.ignore_measure: propagate the unmeasured observable (measurement channels removed before the run).
  bool ignore_measure = false;
  /// Measurements removed by apply_ignore_measure (the results still count them).
  std::size_t ignored_measurements = 0;
  /// Qubit registers of a "qasm_file" circuit (they name qubits in observables: "Zq[3]").
  std::vector<QubitRegister> registers;
  /// Input parameters of a "qasm_file" circuit (circuit.params).
  std::map<std::string, double> params;
  /// Inputs of a "qasm_file" circuit that name sweep parameters (circuit.params: input → parameter); the
  /// sweep's column k is the file read with column k's values.
  std::map<std::string, std::string> swept_params;
  /// Warnings from reading the circuit file (located one-liners).
  std::vector<std::string> warnings;
  /// "sweep" (empty: no sweep). With a sweep, sweep_circuits holds the K column circuits (column 0 equal
  /// to `circuit`) and sweep_bindings the gate fields that name parameters, in circuit order.
  TaskSweep sweep;
  std::vector<Circuit> sweep_circuits;
  std::vector<SweepBinding> sweep_bindings;
  /// "gradient": sweep parameters to differentiate every value by (empty: none), in file order.
  std::vector<std::string> gradient;
};

/// With task.ignore_measure: removes the circuit's measurement channels (from every sweep column too),
/// counting them in ignored_measurements (resets stay). Without: nothing.
void apply_ignore_measure(Task& task);

/// Parses task JSON text. `file` names it in error messages; `base_dir` resolves "stim_file".
Task parse_task(std::string_view json_text, const std::string& file = "<task>",
                const std::filesystem::path& base_dir = ".");

/// Reads and parses a task file (std::runtime_error if it cannot be read).
Task load_task(const std::filesystem::path& path);

/// The circuit's gates as a JSON array in the task vocabulary (v1 names wherever v1 has one;
/// Clifford gates beyond v1 under their factory names; rotations about one or several axes as
/// rz/rx/ry or pauli_rotation; raw transfer matrices and custom channels throw
/// std::invalid_argument since the schema has no word for them).
std::string gates_to_json(const Circuit& circuit);

/// The channel that `channel`'s task gate becomes with each of `fields` ("theta", "p", "px", …) set to
/// `value`, the gate's other fields as they are: how a gradient varies the gate fields that name one sweep
/// parameter. std::invalid_argument when the gate has no such numeric field (or no task word, as
/// gates_to_json) or `value` is outside the field's range.
Channel with_gate_fields(const Channel& channel, std::span<const std::string> fields, double value);

/// A whole task as JSON text (schema v1 plus whichever extensions the task uses), such that
/// parse_task(task_to_json(t)) reproduces t.
std::string task_to_json(const Task& task);

}  // namespace paulistrings::io
