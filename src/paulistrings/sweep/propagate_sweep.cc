// propagate_sweep() and AnySweepSum: see propagate_sweep.h.

#include "paulistrings/sweep/propagate_sweep.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <new>
#include <numbers>
#include <stdexcept>
#include <string>

#include "paulistrings/cpu/cpu_engine.h"
#include "paulistrings/engine/validate.h"
#include "paulistrings/sweep/grouped_sweep_engine.h"
#include "paulistrings/sweep/reference_sweep_engine.h"
#include "paulistrings/sweep/sweep_driver.h"
#include "paulistrings/sweep/sweep_engine.h"

namespace paulistrings {

std::size_t AnySweepSum::num_qubits() const {
  return visit([](const auto& s) { return s.num_qubits(); });
}
std::size_t AnySweepSum::size() const {
  return visit([](const auto& s) { return s.size(); });
}
std::size_t AnySweepSum::columns() const {
  return visit([](const auto& s) { return s.columns(); });
}

std::vector<Complex> AnySweepSum::expectations(const ProductState& state) const {
  return visit([&](const auto& s) {
    if (s.num_qubits() != state.num_qubits()) {
      throw std::invalid_argument("expectation: the state has " + std::to_string(state.num_qubits()) +
                                  " qubits but the sweep has " + std::to_string(s.num_qubits()));
    }
    std::vector<Complex> total(s.columns(), Complex(0.0));
    for (std::size_t i = 0; i < s.size(); ++i) {
      const int v = state.value(s.keys()[i]);
      if (v == 0) continue;
      const auto row = s.row(i);
      for (std::size_t k = 0; k < row.size(); ++k) total[k] += v < 0 ? -Complex(row[k]) : Complex(row[k]);
    }
    return total;
  });
}

std::vector<double> AnySweepSum::norms_squared() const {
  return visit([](const auto& s) {
    std::vector<double> total(s.columns(), 0.0);
    for (std::size_t i = 0; i < s.size(); ++i) {
      const auto row = s.row(i);
      for (std::size_t k = 0; k < row.size(); ++k) total[k] += magnitude_squared(row[k]);
    }
    return total;
  });
}

AnyPauliSum AnySweepSum::column(std::size_t k) const {
  return visit([&](const auto& s) { return AnyPauliSum(s.column(k)); });
}

namespace {

void validate_sweep(const AnyPauliSum& observable, std::span<const Circuit> columns,
                    const PropagateOptions& options) {
  if (columns.empty()) throw std::invalid_argument("a sweep needs at least one column (one circuit)");
  for (std::size_t k = 0; k < columns.size(); ++k) {
    // What any run checks (qubit counts, threads, device ordinal); complex amplitudes meet a complex sum
    // (propagate_sweep makes it so).
    if (const std::string problem = run_problem(observable.num_qubits(), true, columns[k], options);
        !problem.empty()) {
      throw std::invalid_argument("sweep: column " + std::to_string(k) + ": " + problem);
    }
    if (columns[k].size() != columns[0].size()) {
      throw std::invalid_argument("sweep: column " + std::to_string(k) + "'s circuit has " +
                                  std::to_string(columns[k].size()) + " layers but column 0's has " +
                                  std::to_string(columns[0].size()));
    }
  }
  if (options.device >= 0) {
    throw std::invalid_argument("sweeps run on the CPU engines; a GPU sweep is not available yet");
  }
  if (options.engine == Engine::column) {
    throw std::invalid_argument("sweeps run on the cpu or reference engine; the column engine has no sweep");
  }
  if (options.start_layer != 0)
    throw std::invalid_argument("a sweep continues from a layer through resume_sweep, not start_layer");
  if (options.truncation.contains(Truncation::Kind::collapse_sample)) {
    throw std::invalid_argument(
        "collapse_sample has no meaning in a sweep (each column would collapse differently)");
  }
}

/// K value columns equal to the observable, then the derivative columns at zero.
template <int W, Coefficient C>
SweepSum<W, C> start_sum(const PauliSum<W, C>& observable, std::size_t K, std::size_t all_columns) {
  std::vector<PauliString<W>> keys(observable.keys().begin(), observable.keys().end());
  std::vector<C> coefficients(keys.size() * all_columns, C(0.0));
  for (std::size_t i = 0; i < keys.size(); ++i) {
    std::fill_n(coefficients.begin() + static_cast<std::ptrdiff_t>(i * all_columns), K,
                observable.coefficients()[i]);
  }
  return SweepSum<W, C>(observable.num_qubits(), all_columns, std::move(keys), std::move(coefficients));
}

/// The light cone of a state as the engine's words (zeros where the state has none: the engine's own,
/// from the keys, stands).
template <int W>
std::array<std::uint64_t, W> cone_words(const std::vector<std::uint64_t>& cone) {
  std::array<std::uint64_t, W> words{};
  std::copy_n(cone.begin(), std::min<std::size_t>(cone.size(), W), words.begin());
  return words;
}

/// One group to start from: its value columns [first, first + count), its rows and, when restored, the
/// engine layout it had.
template <int W, Coefficient C>
struct GroupStart {
  std::size_t first = 0, count = 0;
  SweepSum<W, C> sum;
  int bucket_bits = 0;
  std::vector<std::uint64_t> light_cone;
  std::size_t next_count = 0;
  bool apart = false;  ///< one column run apart (SweepGroupState::apart)
};

/// Runs the sweep from `starts` (the groups after `start_layer` steps; `restored`: a state handed back or
/// loaded, whose engine layouts and light cones the starts hold) and leaves the state reached in `state`.
/// The starts' rows are let go once the engines hold their copies.
/// `make_apart` (empty: the columns never run apart) builds the host engine of a column run apart; a group
/// runs apart as `tuning` says.
template <int W, Coefficient C, class Engine, class MakeEngine>
SweepStats run_groups(std::vector<GroupStart<W, C>> starts, std::size_t start_layer, std::size_t K,
                      std::span<const Circuit> columns, std::span<const SweepGradient> gradients,
                      const PropagateOptions& options, SweepState& state, MakeEngine&& make,
                      typename GroupedSweepEngine<W, C, Engine>::MakeApart make_apart = {},
                      const SweepTuning& tuning = {}) {
  using Grouped = GroupedSweepEngine<W, C, Engine>;
  const std::size_t num_qubits = starts.front().sum.num_qubits();
  std::vector<typename Grouped::Group> groups;
  for (GroupStart<W, C>& start : starts) {
    typename Grouped::Group group;
    group.first = start.first;
    group.count = start.count;
    if (start.apart) {
      // The column's rows as the host engine left them (canonical order): the engine is rebuilt over them.
      group.apart = make_apart(start.sum.column(0));
    } else {
      group.engine = make(start, false);
    }
    group.next_count = start.next_count;
    start.sum = SweepSum<W, C>();
    groups.push_back(std::move(group));
  }
  starts.clear();
  typename Grouped::Settings settings;
  settings.split = options.sweep_split;
  settings.min_terms = options.sweep_split_min_terms;
  settings.tested = start_layer > 0;
  settings.apart_terms = make_apart ? tuning.apart_terms : 0;
  settings.apart_cost_share = tuning.apart_cost_share;
  settings.group_terms = options.sweep_split_min_terms;
  // An engine's layout (bucket count, light cone) as a state or a new group holds it (none for the
  // reference engine).
  const auto layout = [](const Engine* e, int& bits, std::vector<std::uint64_t>& cone) {
    bits = 0;
    cone.clear();
    if (e == nullptr) return;  // a column run apart: its host engine is rebuilt from its rows
    if constexpr (requires { e->bucket_bits(); }) {
      bits = e->bucket_bits();
      cone.assign(e->light_cone().begin(), e->light_cone().end());
    }
  };
  // A new group continues its parent's layout: the same bucket count, its rows in the parent's order, the
  // parent's light cone, every term tested (the split is at a layer boundary).
  Grouped engine(
      num_qubits, K, 1 + gradients.size(), std::move(groups),
      [&](const SweepSum<W, C>& rows, std::size_t values, const Engine& parent) {
        GroupStart<W, C> start;
        start.count = values;
        start.sum = rows;
        layout(&parent, start.bucket_bits, start.light_cone);
        return make(start, true);
      },
      settings, make_apart);
  // Hands the state reached back and lets the engines go, each once its rows are out (the engine is not
  // run again).
  const auto hand_back = [&](std::size_t layers_done) {
    state.layers_done = layers_done;
    state.groups.clear();
    const auto& reached = engine.groups();
    if (reached.size() == 1) {
      layout(reached[0].engine.get(), state.bucket_bits, state.light_cone);
      state.next_count = reached[0].next_count;
      state.sum = AnySweepSum(engine.release(0));
      return;
    }
    std::vector<SweepSum<W, C>> parts;
    for (std::size_t p = 0; p < reached.size(); ++p) {
      SweepGroupState group;
      group.first = reached[p].first;
      group.count = reached[p].count;
      layout(reached[p].engine.get(), group.bucket_bits, group.light_cone);
      group.next_count = reached[p].next_count;
      group.apart = reached[p].apart != nullptr;
      state.groups.push_back(std::move(group));
      parts.push_back(engine.release(p));
    }
    state.sum = AnySweepSum(engine.merge(parts));
    state.bucket_bits = 0;
    state.light_cone.clear();
    state.next_count = 0;
    for (std::size_t p = 0; p < parts.size(); ++p) state.groups[p].sum = AnySweepSum(std::move(parts[p]));
  };
  SweepStats stats;
  try {
    stats = run_sweep<W>(engine, columns, gradients, options, start_layer);
  } catch (const HostMemoryExceeded& e) {
    // The guard stops before a layer: the state before it is handed back (when there is room to copy it
    // out), so that a checkpoint can keep the work.
    if (e.details().state_kept) {
      try {
        hand_back(e.details().layers_done);
      } catch (const std::bad_alloc&) {
        state = SweepState{};
      }
    }
    throw;
  }
  stats.groups = engine.groups().size();
  stats.splits = engine.splits();
  stats.apart_columns = engine.apart_columns();  // before the engines go
  hand_back(stats.stats.layers_done);
  return stats;
}

/// Runs the sweep from `starts` on the engine options.engine names (run_groups).
template <int W, Coefficient C>
SweepStats run_from(std::vector<GroupStart<W, C>> starts, std::size_t start_layer, bool restored,
                    std::span<const Circuit> columns, std::span<const SweepGradient> gradients,
                    const PropagateOptions& options, const SweepTuning& tuning, SweepState& state) {
  const std::size_t K = columns.size();
  if (options.engine == Engine::reference) {
    return run_groups<W, C, ReferenceSweepEngine<W, C>>(
        std::move(starts), start_layer, K, columns, gradients, options, state,
        [](const GroupStart<W, C>& start, bool) {
          return std::make_unique<ReferenceSweepEngine<W, C>>(start.sum, start.count);
        });
  }
  SweepEngineOptions engine_options;
  engine_options.threads = options.threads == 0 ? available_cpus() : options.threads;
  // Buckets as long as the ordinary engine's, though a term is K coefficients: a task's fixed cost
  // (its index, its flags) outweighs cache misses at shorter buckets (docs/PERFORMANCE.md "Sweeps").
  engine_options.target_bucket_len = options.target_bucket_len;
  engine_options.parallel_threshold = options.parallel_threshold;
  // A group split off mid-run continues its parent's layout, every term tested; the groups a run starts
  // with are restored when resumed (after a layer every term has passed the per-term test; the first
  // layer always tests them all).
  const auto make = [&](const GroupStart<W, C>& start, bool split_off) {
    const bool layout = restored || split_off;
    auto engine = std::make_unique<SweepEngine<W, C>>(start.sum, start.count, engine_options,
                                                      layout ? start.bucket_bits : -1);
    if (layout) {
      engine->restore(cone_words<W>(start.light_cone),
                      split_off || start_layer > 0 ? &options.truncation : nullptr);
    }
    return engine;
  };
  // Columns run apart on the engine propagate() runs one column on (no derivative columns there).
  typename GroupedSweepEngine<W, C, SweepEngine<W, C>>::MakeApart make_apart;
  if (gradients.empty()) {
    make_apart = [&options](const PauliSum<W, C>& column) {
      return std::make_unique<HostEngine<W, C>>(column, options);
    };
  }
  return run_groups<W, C, SweepEngine<W, C>>(std::move(starts), start_layer, K, columns, gradients, options,
                                             state, make, make_apart, tuning);
}
/// The observable at the sweep's coefficient type (sweep_is_complex).
AnyPauliSum typed_observable(const AnyPauliSum& observable, std::span<const Circuit> columns,
                             std::span<const SweepGradient> gradients) {
  AnyPauliSum typed = observable;
  if (sweep_is_complex(observable, columns, gradients)) typed.make_complex();
  return typed;
}

}  // namespace

bool sweep_is_complex(const AnyPauliSum& observable, std::span<const Circuit> columns,
                      std::span<const SweepGradient> gradients) {
  const auto complex_channel = [](const Channel& channel) { return channel.has_complex_transfer(); };
  const auto complex_derivative = [](const LayerDerivative& d) {
    return d.plus.has_complex_transfer() || d.minus.has_complex_transfer();
  };
  return observable.is_complex() ||
         std::any_of(columns.begin(), columns.end(),
                     [&](const Circuit& c) { return std::any_of(c.begin(), c.end(), complex_channel); }) ||
         std::any_of(gradients.begin(), gradients.end(), [&](const SweepGradient& g) {
           return std::any_of(g.derivatives.begin(), g.derivatives.end(), [&](const auto& column) {
             return std::any_of(column.begin(), column.end(), complex_derivative);
           });
         });
}

SweepStats propagate_sweep(const AnyPauliSum& observable, std::span<const Circuit> columns,
                           const PropagateOptions& options, SweepState& state,
                           std::span<const SweepGradient> gradients, const SweepTuning& tuning) {
  validate_sweep(observable, columns, options);
  const AnyPauliSum typed = typed_observable(observable, columns, gradients);
  return typed.visit([&](const auto& sum) {
    using Sum = std::decay_t<decltype(sum)>;
    std::vector<GroupStart<Sum::kWidth, typename Sum::Coeff>> starts(1);
    starts[0].count = columns.size();
    starts[0].sum = start_sum(sum, columns.size(), columns.size() * (1 + gradients.size()));
    return run_from(std::move(starts), 0, false, columns, gradients, options, tuning, state);
  });
}

SweepStats propagate_sweep(const AnyPauliSum& observable, std::span<const Circuit> columns,
                           const PropagateOptions& options, AnySweepSum& result,
                           std::span<const SweepGradient> gradients, const SweepTuning& tuning) {
  SweepState state;
  SweepStats stats = propagate_sweep(observable, columns, options, state, gradients, tuning);
  result = std::move(state.sum);
  return stats;
}

SweepStats resume_sweep(const AnyPauliSum& observable, std::span<const Circuit> columns,
                        const PropagateOptions& options, SweepState& state,
                        std::span<const SweepGradient> gradients, const SweepTuning& tuning) {
  validate_sweep(observable, columns, options);
  const std::size_t all_columns = columns.size() * (1 + gradients.size());
  const std::string what = "resume_sweep: the state ";
  if (state.sum.num_qubits() != observable.num_qubits()) {
    throw std::invalid_argument(what + "is on " + std::to_string(state.sum.num_qubits()) +
                                " qubits but the observable on " + std::to_string(observable.num_qubits()));
  }
  if (state.sum.columns() != all_columns) {
    throw std::invalid_argument(what + "holds " + std::to_string(state.sum.columns()) +
                                " columns but this sweep " + std::to_string(all_columns) + " (" +
                                std::to_string(columns.size()) + " values × (1 + " +
                                std::to_string(gradients.size()) + " gradients))");
  }
  if (state.layers_done > columns[0].size()) {
    throw std::invalid_argument(what + "is after " + std::to_string(state.layers_done) +
                                " layers but the circuits have " + std::to_string(columns[0].size()));
  }
  const auto words = static_cast<std::size_t>(width_for_qubits(observable.num_qubits()));
  const auto check_layout = [&](const std::string& whose, const std::vector<std::uint64_t>& cone, int bits) {
    if (!cone.empty() && cone.size() != words) {
      throw std::invalid_argument(whose + "has a light cone of " + std::to_string(cone.size()) + " words; " +
                                  std::to_string(observable.num_qubits()) + " qubits take " +
                                  std::to_string(words));
    }
    if (bits < 0 || bits > kMaxBucketBits) {
      throw std::invalid_argument(whose + "has bucket bits " + std::to_string(bits) + " (0 to " +
                                  std::to_string(kMaxBucketBits) + ")");
    }
  };
  check_layout(what, state.light_cone, state.bucket_bits);
  // A split state: groups of adjacent value columns covering them in order, each with its columns.
  std::size_t next_first = 0;
  for (std::size_t g = 0; g < state.groups.size(); ++g) {
    const SweepGroupState& group = state.groups[g];
    const std::string whose = what + "'s group " + std::to_string(g) + " ";
    if (group.first != next_first || group.count == 0 || group.first + group.count > columns.size() ||
        group.sum.num_qubits() != observable.num_qubits() ||
        group.sum.columns() != group.count * (1 + gradients.size())) {
      const std::string expected = "value columns from " + std::to_string(next_first) + ", each with its " +
                                   std::to_string(gradients.size()) + " derivative columns";
      throw std::invalid_argument(whose + "is not the next range of adjacent columns of this sweep (" +
                                  expected + ")");
    }
    check_layout(whose, group.light_cone, group.bucket_bits);
    if (group.apart && (group.count != 1 || !gradients.empty() || options.engine != Engine::cpu)) {
      throw std::invalid_argument(whose +
                                  "runs one column apart, which only a one-column group of a sweep "
                                  "without gradients on the cpu engine can");
    }
    next_first = group.first + group.count;
  }
  if (!state.groups.empty() && next_first != columns.size()) {
    throw std::invalid_argument(what + "has groups covering " + std::to_string(next_first) + " of " +
                                std::to_string(columns.size()) + " value columns");
  }
  const AnyPauliSum typed = typed_observable(observable, columns, gradients);
  return typed.visit([&](const auto& sum) {
    using Sum = std::decay_t<decltype(sum)>;
    using Start = GroupStart<Sum::kWidth, typename Sum::Coeff>;
    const auto rows_of = [&](AnySweepSum& any) {
      auto* rows = any.get_if<Sum::kWidth, typename Sum::Coeff>();
      if (rows == nullptr) {
        throw std::invalid_argument(what + "has " + (any.is_complex() ? "complex" : "real") +
                                    " coefficients but this sweep's are " +
                                    (Sum::kIsComplex ? "complex" : "real"));
      }
      return rows;
    };
    // The engines copy the rows; the state's copies go before the run (the state reached replaces them).
    std::vector<Start> starts;
    if (state.groups.empty()) {
      Start start;
      start.count = columns.size();
      start.sum = std::move(*rows_of(state.sum));
      start.bucket_bits = state.bucket_bits;
      start.light_cone = state.light_cone;
      start.next_count = state.next_count;
      starts.push_back(std::move(start));
    } else {
      for (SweepGroupState& group : state.groups) rows_of(group.sum);
      for (SweepGroupState& group : state.groups) {
        Start start;
        start.first = group.first;
        start.count = group.count;
        start.sum = std::move(*rows_of(group.sum));
        start.bucket_bits = group.bucket_bits;
        start.light_cone = group.light_cone;
        start.next_count = group.next_count;
        start.apart = group.apart;
        starts.push_back(std::move(start));
      }
    }
    state.sum = AnySweepSum();
    state.groups.clear();
    return run_from(std::move(starts), state.layers_done, true, columns, gradients, options, tuning, state);
  });
}

LayerDerivative sweep_derivative(std::size_t layer, const std::function<Channel(double)>& make, double value,
                                 bool angle, double chain) {
  if (!std::isfinite(value) || !std::isfinite(chain)) {
    throw std::invalid_argument("sweep_derivative: the parameter value and its chain factor must be finite");
  }
  if (angle) {
    // A Pauli rotation's transfer amplitudes are 1, cos θ, sin θ: A'(θ) = (A(θ + π/2) − A(θ − π/2)) / 2.
    return LayerDerivative{layer, make(value + std::numbers::pi / 2), make(value - std::numbers::pi / 2),
                           chain / 2};
  }
  // Affine in the strength: any two valid strengths give the slope; the widest step tried first keeps
  // rounding small, the narrower ones reach strengths near the edge of a joint range (a Pauli channel's
  // px + py + pz ≤ 1).
  Channel at_value = make(value);
  for (double step : {0.25, -0.25, 1.0 / 32, -1.0 / 32, 1.0 / 256, -1.0 / 256}) {
    try {
      return LayerDerivative{layer, at_value, make(value - step), chain / step};
    } catch (const std::invalid_argument&) {
    }
  }
  throw std::invalid_argument("sweep_derivative: no second strength near " + std::to_string(value) +
                              " is valid for this channel");
}

}  // namespace paulistrings
