// The checkpoints of a run: see checkpoints.h.
#include "paulistrings/run/checkpoints.h"

#include <cerrno>
#include <cstring>

namespace paulistrings {

CheckpointNotFound::CheckpointNotFound(const std::filesystem::path& path)
    : std::runtime_error("cannot open " + path.string() + ": " + std::strerror(ENOENT)), path_(path) {}

ResumePoint load_resume(const std::filesystem::path& path, const Circuit& circuit, std::size_t num_qubits,
                        std::span<const std::uint64_t> fingerprints, const std::string& fingerprint_covers,
                        std::size_t rank, std::size_t ranks, int threads) {
  ResumePoint resume;
  resume.path = path;
  const std::size_t parts = io::checkpoint_parts(path);
  resume.in_parts = parts > 0;
  if (resume.in_parts) {
    resume.checkpoint = io::load_checkpoint_share(path, parts, rank, ranks, threads);
  } else if (!std::filesystem::exists(path)) {
    throw CheckpointNotFound(path);
  } else {
    resume.checkpoint = io::load_checkpoint(path, threads);
  }
  const io::Checkpoint& checkpoint = resume.checkpoint;
  bool matched = false;
  for (std::size_t i = 0; i < fingerprints.size() && !matched; ++i) {
    if (checkpoint.task_fingerprint == fingerprints[i]) {
      matched = true;
      resume.match = i;
    }
  }
  if (!matched || checkpoint.circuit_fingerprint != circuit.fingerprint() ||
      checkpoint.sum.num_qubits() != num_qubits || checkpoint.layers_done > circuit.size()) {
    throw std::invalid_argument("checkpoint " + path.string() + " belongs to a different " +
                                fingerprint_covers + "; refusing to resume from it");
  }
  return resume;
}

void agree_on_resume_parts(Transport& transport, const ResumePoint& resume, bool several_observables) {
  // Max-reductions of each value and its complement: equal everywhere iff max(v) == ~max(~v).
  const std::uint64_t layers = resume.checkpoint.layers_done, match = resume.match;
  std::uint64_t seen[4] = {layers, ~layers, match, ~match};
  transport.all_reduce_max(std::span<std::uint64_t>(seen, 4));
  if (seen[0] != ~seen[1] || seen[2] != ~seen[3]) {
    throw std::invalid_argument("checkpoint " + resume.path.string() +
                                ": its parts were written after different " + "layers" +
                                (several_observables ? " or for different observables" : "") +
                                " (a run stopped while writing them?); refusing to resume from it");
  }
}

void write_checkpoint(const std::filesystem::path& path, const Circuit& circuit, std::uint64_t fingerprint,
                      std::size_t layers_done, const AnyPauliSum& sum, Transport* transport) {
  // Saved from the live sum (a Checkpoint would copy it).
  if (transport == nullptr) {
    io::save_checkpoint(path, circuit.fingerprint(), fingerprint, layers_done, sum);
    io::remove_other_checkpoints(path, 0);
    return;
  }
  const auto parts = static_cast<std::size_t>(transport->size());
  io::save_checkpoint(io::checkpoint_part_path(path, static_cast<std::size_t>(transport->rank()), parts),
                      circuit.fingerprint(), fingerprint, layers_done, sum);
  std::uint64_t written = 1;  // every part is written once every rank has come here
  transport->all_reduce_max(std::span<std::uint64_t>(&written, 1));
  if (transport->rank() == 0) io::remove_other_checkpoints(path, parts);
}

}  // namespace paulistrings
