// The seeded families of the engine-equivalence suite. Each family reproduces, seed for seed, the
// inputs its engines were first tested on, so a seed named in an old failure still means the same case.

#include "paulistrings/testing/engine_cases.h"

#include <algorithm>
#include <stdexcept>

#include "paulistrings/testing/oracle_bridge.h"

namespace paulistrings::testing {
namespace {

struct SumType {
  int width;
  bool complex;
};

/// make.template operator()<W, C>() for the width and coefficient type `type` names.
template <class Make>
AnyEngineCase with_sum_type(SumType type, Make&& make) {
  if (type.complex) {
    switch (type.width) {
      case 1:
        return make.template operator()<1, Complex>();
      case 2:
        return make.template operator()<2, Complex>();
      case 4:
        return make.template operator()<4, Complex>();
      case 16:
        return make.template operator()<16, Complex>();
    }
  } else {
    switch (type.width) {
      case 1:
        return make.template operator()<1, double>();
      case 2:
        return make.template operator()<2, double>();
      case 4:
        return make.template operator()<4, double>();
      case 16:
        return make.template operator()<16, double>();
    }
  }
  throw std::logic_error("engine_cases: no family uses width " + std::to_string(type.width));
}

// ---- small circuits against the dense oracle ----

std::vector<AnyEngineCase> oracle_seed(int seed) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(seed) * 7919 + 17);
  const std::size_t n =
      seed % 25 == 0 ? 7 + static_cast<std::size_t>(seed / 25) % 2 : 2 + static_cast<std::size_t>(seed) % 5;
  const std::size_t depth = 6 + static_cast<std::size_t>(seed) % 20;
  const Circuit circuit = random_circuit(rng, n, depth);
  const bool complex_observable = seed % 3 == 0;
  const auto terms = random_terms(rng, n, 1 + static_cast<std::size_t>(seed) % 12, complex_observable);
  auto oracle = std::make_shared<OracleInputs>();
  oracle->qubits = n;
  oracle->start = dense::operator_from_pauli_terms(static_cast<int>(n), terms);
  oracle->stabilizers = random_stabilizer_generators(rng, n);
  const std::string product_label = random_product_label(rng, n);
  oracle->product_states = {{"z+", std::string(n, '0')},
                            {"x+", std::string(n, '+')},
                            {"y+", std::string(n, 'r')},
                            {product_label, product_label}};
  // Complex storage exactly when a coefficient has an imaginary part (AnyPauliSum's rule).
  const bool complex =
      std::any_of(terms.begin(), terms.end(), [](const auto& t) { return t.second.imag() != 0.0; });
  std::vector<AnyEngineCase> cases;
  for (const Direction direction : {Direction::forward, Direction::heisenberg}) {
    cases.push_back(with_sum_type({1, complex}, [&]<int W, Coefficient C>() -> AnyEngineCase {
      EngineCase<W, C> c;
      c.circuit = circuit;
      std::vector<typename PauliSum<W, C>::Term> parsed;
      for (const auto& [label, value] : terms) {
        C coefficient;
        if constexpr (std::same_as<C, Complex>) {
          coefficient = value;
        } else {
          coefficient = value.real();
        }
        parsed.push_back({PauliString<W>::from_label(label, n), coefficient});
      }
      c.start = PauliSum<W, C>::from_terms(n, std::move(parsed));
      c.options.direction = direction;
      c.options.min_buckets = 1 + static_cast<std::size_t>(seed) % 8;  // several bucket counts
      c.options.target_bucket_len = 4;
      c.oracle = oracle;
      return c;
    }));
  }
  return cases;
}

// ---- 1 to 10^5 terms against the reference engine ----

std::vector<AnyEngineCase> mixed_size_seed(int seed, MixedSizes which) {
  const bool cpu = which == MixedSizes::cpu_seeds;
  static constexpr SumType kCpuTypes[] = {{1, false}, {2, false}, {4, false},
                                          {1, true},  {2, true},  {4, true}};
  static constexpr SumType kGpuTypes[] = {{1, false}, {2, false}, {4, false}, {16, false},
                                          {1, true},  {2, true},  {4, true},  {16, true}};
  const SumType type = cpu ? kCpuTypes[seed % 6] : kGpuTypes[seed % 8];
  return {with_sum_type(type, [&]<int W, Coefficient C>() -> AnyEngineCase {
    std::mt19937_64 rng(cpu ? static_cast<std::uint64_t>(seed) * 104729 + 3
                            : static_cast<std::uint64_t>(seed) * 7919 + 11);
    constexpr std::size_t kMaxQubits = 64 * W;
    const int which_truncation = seed % 9;
    // Sizes from 1 to 10^5: most small, some bucketed, a few large (shallow circuits there).
    static constexpr std::size_t kSizes[] = {1, 3, 40, 300, 2000, 20000, 100000};
    const std::size_t size_class = static_cast<std::size_t>(seed) % 10 < 7
                                       ? static_cast<std::size_t>(seed) % 5
                                       : 5 + static_cast<std::size_t>(seed) % 2;
    const std::size_t initial_terms = kSizes[size_class];
    // Qubits the circuit touches: without a bounding truncation (none, or `|` which keeps all) the
    // sum can fill 4^active strings, so those runs stay on few qubits; large inputs use 9 (≤ 4^9).
    const bool bounded = which_truncation != 0 && which_truncation != 7;
    const std::size_t active = initial_terms >= 20000 ? 9
                               : bounded              ? 6 + static_cast<std::size_t>(seed) % 4
                                                      : 4 + static_cast<std::size_t>(seed) % 3;
    const std::size_t offset = W == 1 ? 0 : kMaxQubits / 2 - active / 2;  // straddle a word boundary
    const std::size_t total = std::min(kMaxQubits, offset + active + 3);
    const std::size_t depth =
        initial_terms >= 20000 ? (cpu ? 3 : 4) : 8 + static_cast<std::size_t>(seed) % 17;
    EngineCase<W, C> c;
    c.circuit = random_circuit(rng, active, depth, {}, total, offset);
    c.start = random_window_sum<W, C>(rng, initial_terms, total, offset, active);
    const std::uint64_t collapse_seed = rng();
    c.truncation = [which_truncation, collapse_seed] {
      return truncation_case(which_truncation, collapse_seed);
    };
    c.options.direction = seed % 2 ? Direction::heisenberg : Direction::forward;
    if (cpu) {
      c.options.min_buckets = std::size_t{1} << (seed % 4 * 2);  // 1, 4, 16, 64 buckets
      c.options.target_bucket_len = 8 << (seed % 3);             // small buckets: refinement mid-run
      c.options.threads = 2;
      c.options.parallel_threshold = seed % 2 ? 0 : 4096;  // force the parallel path on small sums too
      // Every third seed runs the alternative formulations: gather-sort-merge general layers and
      // rotations through the orbit path instead of in place.
      if ((seed / 6) % 3 == 1) {
        c.options.general_layer = GeneralLayer::sort_merge;
        c.options.in_place_rotations = false;
      }
    }
    return c;
  })};
}

// ---- small sums over partitions ----

/// The partition cases' policies, by which % 9 (no collapse_sample: partitions do not support it).
Truncation partition_truncation_case(int which) {
  const Truncation cases[] = {Truncation(),
                              Truncation::coeff(1e-3),
                              Truncation::weight(4),
                              Truncation::topn(300),
                              Truncation::approx_topn(300),
                              Truncation::coeff(1e-3) & Truncation::weight(5),
                              Truncation::topn(500) | Truncation::coeff(1e-2),
                              Truncation::approx_topn(2000) & Truncation::coeff(1e-5),
                              Truncation::topn(40) & Truncation::coeff(1e-6)};
  return cases[which % 9];
}

std::vector<AnyEngineCase> partition_seed(int seed, bool gpu_seeds) {
  // Five kinds on CPU partitions, a sixth (W = 16, complex) on GPU partitions.
  static constexpr SumType kTypes[] = {{1, false}, {2, false}, {1, true}, {2, true}, {4, false}, {16, true}};
  const SumType type = kTypes[seed % (gpu_seeds ? 6 : 5)];
  return {with_sum_type(type, [&]<int W, Coefficient C>() -> AnyEngineCase {
    std::mt19937_64 rng(static_cast<std::uint64_t>(seed) * 7919 + 11);
    const int which = seed % 9;
    const bool bounded = which != 0 && which != 6;
    const std::size_t active =
        bounded ? 6 + static_cast<std::size_t>(seed) % 3 : 4 + static_cast<std::size_t>(seed) % 3;
    const std::size_t offset = W == 1 ? 0 : 64 - active / 2;  // straddle a word boundary
    const std::size_t total = std::min<std::size_t>(64 * W, offset + active + 2);
    static constexpr std::size_t kSizes[] = {1, 5, 60, 400, 1500};
    const std::size_t initial = kSizes[static_cast<std::size_t>(seed / 9) % 5];
    const std::size_t depth = 8 + static_cast<std::size_t>(seed) % 17;
    EngineCase<W, C> c;
    c.circuit = random_circuit(rng, active, depth, {}, total, offset);
    c.start = random_window_sum<W, C>(rng, initial, total, offset, active);
    c.options.direction = seed % 2 ? Direction::heisenberg : Direction::forward;
    c.options.min_buckets = std::size_t{1} << (seed % 3 * 2);
    c.options.target_bucket_len = 8 << (seed % 3);
    // Every fourth seed forces the engines' parallel paths, with 2 threads per partition at P = 2
    // (exchange hooks included).
    c.options.threads = seed % 4 == 1 ? 4 : 2;
    c.options.parallel_threshold = seed % 4 == 1 ? 0 : 4096;
    c.truncation = [which] { return partition_truncation_case(which); };
    c.partition.row_seed = static_cast<std::uint64_t>(seed);
    // Remote general layers: inputs moved to their orbit's partition first (two exchanges), or the
    // half-orbit outputs summed by the receiver, by seed.
    c.partition.route_orbits_from = seed / 3 % 2 ? 0 : SIZE_MAX;
    if (seed % 5 == 4) {
      c.partition.row_policy = PartitionRowPolicy::seeded_excluding;
      c.partition.excluded_qubits = {offset, offset + 1};
    }
    return c;
  })};
}

// ---- the MPI ranks' cases ----

/// The MPI cases' policies, by which % 6.
Truncation mpi_truncation_case(int which) {
  const Truncation cases[] = {Truncation(),
                              Truncation::coeff(1e-3),
                              Truncation::topn(200),
                              Truncation::approx_topn(200),
                              Truncation::weight(4) & Truncation::coeff(1e-5),
                              Truncation::topn(60) & Truncation::coeff(1e-6)};
  return cases[which % 6];
}

}  // namespace

Truncation truncation_case(int which, std::uint64_t seed) {
  const Truncation cases[kTruncationCases] = {Truncation(),
                                              Truncation::coeff(1e-3),
                                              Truncation::weight(4),
                                              Truncation::topn(300),
                                              Truncation::approx_topn(300),
                                              Truncation::collapse_sample(200, seed),
                                              Truncation::coeff(1e-4) & Truncation::weight(6),
                                              Truncation::topn(500) | Truncation::coeff(1e-2),
                                              Truncation::approx_topn(2000) & Truncation::coeff(1e-5)};
  return cases[which % kTruncationCases];
}

CaseFamily oracle_cases() { return {"oracle", 240, oracle_seed}; }

CaseFamily mixed_size_cases(MixedSizes seeds) {
  return {seeds == MixedSizes::cpu_seeds ? "mixed sizes (CPU seeds)" : "mixed sizes (GPU seeds)", 300,
          [seeds](int seed) { return mixed_size_seed(seed, seeds); }};
}

CaseFamily partition_cases(bool gpu_seeds) {
  return {gpu_seeds ? "partitions (GPU seeds)" : "partitions", gpu_seeds ? 100 : 120,
          [gpu_seeds](int seed) { return partition_seed(seed, gpu_seeds); }};
}

EngineCase<1, Complex> mpi_case(int seed) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(seed) * 6151 + 5);
  EngineCase<1, Complex> c;
  const std::size_t active = 6 + static_cast<std::size_t>(seed) % 3;
  c.circuit = random_circuit(rng, active, 10 + static_cast<std::size_t>(seed) % 15, {}, 8);
  const auto terms = random_terms(rng, active, 1 + static_cast<std::size_t>(seed) % 200, true);
  std::vector<PauliSum<1, Complex>::Term> typed;
  for (const auto& [label, value] : terms)
    typed.push_back({PauliString<1>::from_label(label, active), value});
  c.start = PauliSum<1, Complex>::from_terms(8, typed);
  c.options.direction = seed % 2 ? Direction::heisenberg : Direction::forward;
  c.truncation = [seed] { return mpi_truncation_case(seed); };
  c.options.threads = 1;
  c.options.min_buckets = 4;
  c.options.target_bucket_len = 16;
  c.partition.row_seed = static_cast<std::uint64_t>(seed);
  // Odd seeds move the inputs of remote general layers to their orbit's rank first (two exchanges).
  c.partition.route_orbits_from = seed % 2 ? 0 : SIZE_MAX;
  return c;
}

CaseFamily mpi_cases() {
  return {"MPI ranks", 40, [](int seed) { return std::vector<AnyEngineCase>{mpi_case(seed)}; }};
}

}  // namespace paulistrings::testing
