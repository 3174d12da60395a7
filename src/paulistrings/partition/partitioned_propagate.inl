// Template body of propagate_partitioned (included by partitioned_propagate.h): the input checks,
// the shares, the in-process launcher and the distributed entry; each partition runs a
// PartitionRunner (partition_runner.inl).

#include <thread>
#include <utility>

#include "paulistrings/engine/validate.h"
#include "paulistrings/partition/cpu_pinning.h"
#include "paulistrings/partition/partition_runner.inl"

namespace paulistrings {
namespace partition_detail {

/// What a partition finds wrong with the run's inputs (empty = fine); the same checks as propagate().
template <int W, Coefficient C>
std::string validate(const PauliSum<W, C>& sum, const Circuit& circuit, const PropagateOptions& options,
                     std::size_t partitions) {
  if (std::string problem = run_problem(sum.num_qubits(), PauliSum<W, C>::kIsComplex, circuit, options);
      !problem.empty()) {
    return problem;
  }
  if (partitions > 1 && options.truncation.contains(Truncation::Kind::collapse_sample)) {
    return std::string("collapse_sample is not supported with ")
        .append(std::to_string(partitions))
        .append(" partitions (use one partition)");
  }
  return {};
}

/// This partition's terms of `sum` (the whole sum, bucket count kept, when there is one partition),
/// bucketed on up to `threads` threads (0: OpenMP's default; a rank's own count under MPI).
template <int W, Coefficient C>
PauliSum<W, C> share_of(const PauliSum<W, C>& sum, const PartitionRows& rows, std::uint32_t rank, int threads) {
  if (rows.bits() == 0) return sum;
  std::vector<typename PauliSum<W, C>::Term> terms;
  for (std::size_t i = 0; i < sum.size(); ++i) {
    if (rows.part(sum.keys()[i]) == rank) terms.push_back({sum.keys()[i], sum.coefficients()[i]});
  }
  PauliSum<W, C> share(sum.num_qubits(), sum.hash().seed());
  share.assign_terms(std::move(terms), sum.bucket_bits(), threads);
  return share;
}

/// Replaces `sum` by the union of the shares (keys are disjoint across partitions), on up to `threads`
/// threads as share_of.
template <int W, Coefficient C>
void assemble(PauliSum<W, C>& sum, std::vector<typename PauliSum<W, C>::Term>&& terms, int bits, int threads) {
  sum.assign_terms(std::move(terms), bits, threads);
}

}  // namespace partition_detail

template <int W, Coefficient C>
PartitionedPropagation propagate_partitioned(PauliSum<W, C>& sum, const Circuit& circuit,
                                             const PropagateOptions& options,
                                             const PartitionOptions& partition_options) {
  using Term = typename PauliSum<W, C>::Term;
  if (partition_options.transport != nullptr) {
    // Distributed: this process is one rank.
    Transport& transport = *partition_options.transport;
    const std::size_t partitions = static_cast<std::size_t>(transport.size());
    PartitionRows::bits_for_count(partitions);  // the same answer on every rank
    const std::uint32_t rank = static_cast<std::uint32_t>(transport.rank());
    std::string problem = partition_detail::validate(sum, circuit, options, partitions);
    if (problem.empty() && !partition_options.cpu_lists.empty()) {
      problem = "cpu_lists pin in-process partitions; an MPI rank is placed by mpirun (--bind-to, --cpu-set)";
    }
    std::optional<PartitionRows> rows;
    if (problem.empty()) {
      try {
        rows.emplace(make_partition_rows(partition_options, sum.num_qubits(), partitions));
      } catch (const std::invalid_argument& e) {
        problem = e.what();
      }
    }
    int device = options.device;
    if (problem.empty() && !partition_options.devices.empty()) {
      if (partition_options.devices.size() == 1) {
        device = partition_options.devices[0];
      } else if (partition_options.devices.size() == partitions) {
        device = partition_options.devices[rank];
      } else {
        problem = "devices: give one device (this rank's) or one per rank (" + std::to_string(partitions) +
                  "), not " + std::to_string(partition_options.devices.size());
      }
    }
    if (!rows) rows.emplace(sum.num_qubits());  // placeholder; the run stops at the agreement
    PauliSum<W, C> share(sum.num_qubits(), sum.hash().seed());
    if (problem.empty()) {
      if (partition_options.input == PartitionInput::share) {
        for (std::size_t i = 0; i < sum.size() && problem.empty(); ++i) {
          const std::uint32_t part = rows->part(sum.keys()[i]);
          if (part != rank) {
            problem = std::string("input = share: term ")
                          .append(sum.keys()[i].to_sparse_label())
                          .append(" belongs to partition ")
                          .append(std::to_string(part))
                          .append(", not to this rank ")
                          .append(std::to_string(rank));
          }
        }
        share = sum;
      } else if (partition_options.input == PartitionInput::scattered) {
        share = sum;  // routed to the owners once the ranks have agreed on the run (PartitionRunner::run)
      } else {
        share = partition_detail::share_of(sum, *rows, rank, options.threads);
      }
    }
    const std::uint64_t input_fp =
        partition_options.input == PartitionInput::replicated ? partition_detail::input_fingerprint(sum) : 0;
    partition_detail::PartitionRunner<W, C> runner(transport, *rows, circuit, options, partition_options,
                                                   true, device < 0 ? -1 : device);
    PartitionedPropagation result = runner.run(share, problem, input_fp);
    if (partition_options.result == PartitionResult::local || partitions == 1) {
      sum = std::move(share);
      return result;
    }
    // Gather by recursive doubling: in round j every rank swaps all it holds with rank ⊕ 2^j.
    std::vector<std::byte> held;
    partition_detail::append_rows<W, C>(held, share.keys(), share.coefficients());
    const int bits = share.bucket_bits();
    share = PauliSum<W, C>(sum.num_qubits(), sum.hash().seed());
    for (int j = 0; (std::size_t{1} << j) < partitions; ++j) {
      std::vector<std::byte> received = transport.exchange(static_cast<int>(rank ^ (1u << j)), held);
      held.insert(held.end(), received.begin(), received.end());
    }
    std::vector<PauliString<W>> keys;
    std::vector<C> values;
    partition_detail::read_rows<W, C>(held, keys, values);
    std::vector<Term> terms(keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) terms[i] = {keys[i], values[i]};
    std::uint64_t max_bits = static_cast<std::uint64_t>(bits);
    transport.all_reduce_max(std::span<std::uint64_t>(&max_bits, 1));
    partition_detail::assemble(sum, std::move(terms), static_cast<int>(max_bits), options.threads);
    return result;
  }

  // In-process: partitions as threads of this process.
  std::size_t partitions = partition_options.partitions;
  std::vector<int> devices = partition_options.devices;
  if (!devices.empty()) {
    if (partitions != 1 && partitions != devices.size()) {
      throw std::invalid_argument("partitions = " + std::to_string(partitions) + " but " +
                                  std::to_string(devices.size()) +
                                  " devices are listed: the device list sets the partition count");
    }
    partitions = devices.size();
  } else if (options.device >= 0) {
    devices.assign(partitions, options.device);
  }
  PartitionRows::bits_for_count(partitions);
  if (const std::string problem = partition_detail::validate(sum, circuit, options, partitions);
      !problem.empty()) {
    throw std::invalid_argument(problem);
  }
  if (const std::string problem = cpu_lists_problem(partition_options.cpu_lists, partitions); !problem.empty()) {
    throw std::invalid_argument(problem);
  }
  const PartitionRows rows = make_partition_rows(partition_options, sum.num_qubits(), partitions);
  std::vector<PauliSum<W, C>> shares;
  shares.reserve(partitions);
  for (std::size_t r = 0; r < partitions; ++r)
    shares.push_back(partition_detail::share_of(sum, rows, static_cast<std::uint32_t>(r), 0));
  const std::uint64_t input_fp = partition_detail::input_fingerprint(sum);
  InProcessGroup group(static_cast<int>(partitions));
  std::vector<std::optional<PartitionedPropagation>> results(partitions);
  std::vector<std::exception_ptr> errors(partitions);
  auto body = [&](std::size_t r) {
    try {
      std::optional<ScopedCpuPin> pin;
      if (!partition_options.cpu_lists.empty()) pin.emplace(partition_options.cpu_lists[r]);
      partition_detail::PartitionRunner<W, C> runner(group.transport(static_cast<int>(r)), rows, circuit,
                                                     options, partition_options, r == 0,
                                                     devices.empty() ? -1 : devices[r]);
      results[r] = runner.run(shares[r], std::string(), input_fp);
    } catch (const std::exception& e) {
      errors[r] = std::current_exception();
      group.abort(static_cast<int>(r), e.what());
    } catch (...) {
      errors[r] = std::current_exception();
      group.abort(static_cast<int>(r), "unknown exception");
    }
  };
  if (partitions == 1) {
    body(0);
  } else {
    std::vector<std::thread> threads;
    threads.reserve(partitions - 1);
    for (std::size_t r = 1; r < partitions; ++r) threads.emplace_back(body, r);
    body(0);  // partition 0 on the calling thread (user callbacks run here)
    for (std::thread& t : threads) t.join();
  }
  // Rethrow the failing partition's own exception (others hold PartitionPeerFailure naming it).
  std::exception_ptr first_peer;
  for (std::size_t r = 0; r < partitions; ++r) {
    if (!errors[r]) continue;
    try {
      std::rethrow_exception(errors[r]);
    } catch (const PartitionPeerFailure&) {
      if (!first_peer) first_peer = errors[r];
    } catch (...) {
      throw;
    }
  }
  if (first_peer) std::rethrow_exception(first_peer);
  if (partitions == 1) {
    sum = std::move(shares[0]);
    return std::move(*results[0]);
  }
  std::vector<Term> terms;
  int bits = sum.bucket_bits();
  for (const PauliSum<W, C>& share : shares) {
    for (std::size_t i = 0; i < share.size(); ++i)
      terms.push_back({share.keys()[i], share.coefficients()[i]});
    bits = std::max(bits, share.bucket_bits());
  }
  partition_detail::assemble(sum, std::move(terms), bits, 0);
  return std::move(*results[0]);
}

}  // namespace paulistrings
