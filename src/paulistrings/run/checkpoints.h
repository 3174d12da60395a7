#pragma once
// The checkpoints of a run (docs/design.md §9): reading the one to resume from — a single file, the
// parts of a distributed run added, or one rank's share of them — and checking that it belongs to the
// run; writing one at a stop — one file, or one part per rank — and removing what an earlier run left
// at the path. The file format itself is io/checkpoint.h.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string>

#include "paulistrings/circuit/circuit.h"
#include "paulistrings/core/any_pauli_sum.h"
#include "paulistrings/io/checkpoint.h"
#include "paulistrings/partition/transport.h"

namespace paulistrings {

/// Nothing to resume from at a path: neither the file nor parts of it exist. The message is the one
/// reading the missing file gives ("cannot open P: No such file or directory"); path() names it.
class CheckpointNotFound : public std::runtime_error {
 public:
  explicit CheckpointNotFound(const std::filesystem::path& path);
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// A checkpoint read to resume from.
struct ResumePoint {
  std::filesystem::path path;
  io::Checkpoint checkpoint;  ///< this rank's share when `in_parts` under several ranks
  std::size_t match = 0;      ///< which of the run's fingerprints (its observable) it carries
  bool in_parts = false;      ///< written in parts (by the ranks of a distributed run)
};

/// Reads the checkpoint at `path` as rank `rank` of `ranks` (one process: 0 of 1): the file; or, written
/// in K parts, in one process the K parts added and as rank r of R the parts j ≡ r (mod R) added — an
/// empty sum where R > K — which the run then routes to their owners, so K and R need not match. Checks
/// that it belongs to the run: its circuit fingerprint is `circuit`'s, its task fingerprint one of
/// `fingerprints` (ResumePoint::match says which), its qubit count `num_qubits`, and it is not past the
/// circuit's end; otherwise std::invalid_argument ("checkpoint P belongs to a different
/// <fingerprint_covers>; refusing to resume from it"). Throws CheckpointNotFound when nothing is at
/// `path`, and what io/checkpoint.h throws for a bad file. No communication. The load orders the terms on
/// up to `threads` threads (the run's; 0: OpenMP's default).
ResumePoint load_resume(const std::filesystem::path& path, const Circuit& circuit, std::size_t num_qubits,
                        std::span<const std::uint64_t> fingerprints, const std::string& fingerprint_covers,
                        std::size_t rank = 0, std::size_t ranks = 1, int threads = 0);

/// Collective over the ranks that read `resume`'s parts: they must all hold parts after the same layer
/// and of the same observable (a run stopped while its ranks were writing leaves parts of two
/// checkpoints); otherwise std::invalid_argument on every rank. `several_observables` adds "or for
/// different observables" to the message.
void agree_on_resume_parts(Transport& transport, const ResumePoint& resume, bool several_observables);

/// Writes the checkpoint of `sum` after `layers_done` steps at `path`: one file (transport null), or
/// under a transport this rank's share as its part (all ranks together: once every part is written, rank
/// 0 removes what an earlier run left at the path — the single file, parts of another rank count). A
/// rank failing to write throws alone (its peers wait in the next collective call: the front end ends
/// the job).
void write_checkpoint(const std::filesystem::path& path, const Circuit& circuit, std::uint64_t fingerprint,
                      std::size_t layers_done, const AnyPauliSum& sum, Transport* transport);

}  // namespace paulistrings
