#pragma once
// DeviceSum<W, C>::Impl, the GPU engine's host side: the state of a sum resident on one device and the
// steps that change it. Private to gpu/ (only the device_sum_*.cc files include it). Its members are
// defined by job, one file each, each file instantiating its own for the ten (W, C) pairs:
//  - device_sum_memory.cc: device memory — the constructor and release, buffers, growth, upload and
//    download, the layer counters, compaction;
//  - device_sum_layers.cc: the layers — apply_layer (rescale, permutation, rotation and general joins),
//    finalize_layer (topn / approx_topn cuts), the per-term test;
//  - device_sum_export.cc: a partitioned run's export (plain, fused with the layer, by orbit);
//  - device_sum_merge.cc: a partitioned run's merge and append of received rows (host, peer, NCCL).
// device_sum.cc forwards DeviceSum's public members here. Design: docs/gpu-engine.md.

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>

#include "paulistrings/gpu/cuda_check.h"
#include "paulistrings/gpu/device_sum.h"
#include "paulistrings/gpu/kernels.h"
#include "paulistrings/gpu/phase_profile.h"

namespace paulistrings::gpu {

/// "1.50 GiB", for messages.
std::string gib(std::size_t bytes);

template <int W, Coefficient C>
struct DeviceSum<W, C>::Impl {
  static constexpr bool kComplex = std::is_same_v<C, Complex>;
  using Key = kernels::Key<W>;
  using Launch = kernels::Launch<W, kComplex>;
  static_assert(sizeof(Key) == sizeof(PauliString<W>), "device keys share the layout of PauliString<W>");
  static_assert(sizeof(C) == (kComplex ? 16 : 8));

  static constexpr std::size_t kMaxStoredTerms = std::numeric_limits<std::uint32_t>::max() - 1;
  /// A join may reserve room for its worst case without reading its counters back up to this size.
  static constexpr std::size_t kEagerReserveBytes = std::size_t{256} << 20;

  /// One device allocation; the owner tracks the bytes held.
  struct Buffer {
    void* ptr = nullptr;
    std::size_t bytes = 0;
  };

  int device = 0;
  std::size_t num_qubits = 0;
  int host_threads = 0;  // GpuEngineOptions::host_threads: collapse_sample's host pass
  bool blocks = true;    // GpuEngineOptions::blocks
  std::uint64_t hash_seed = 0;
  cudaStream_t stream = nullptr;

  Buffer keys, coef;             // capacity terms each
  std::size_t capacity = 0;      // terms the arrays hold
  std::size_t stored = 0;        // terms stored, holes included
  std::size_t holes = 0;         // stored terms with a zero coefficient
  Buffer owner, members, groups, counts, offsets, scan_temp;
  std::size_t table_capacity = 0, members_capacity = 0, scan_capacity = 0;
  Buffer counters, scratch;      // LayerCounters; histograms, totals, support words
  kernels::LayerCounters* host_counters = nullptr;  // pinned
  unsigned long long* host_scratch = nullptr;       // pinned, 2048 + 8 + W words
  /// The pass scratch: a 2048-bin histogram, 8 words of totals, then W words of a merge's light cone.
  static constexpr std::size_t kConeWord = 2048 + 8;
  std::size_t bytes_now = 0, bytes_peak = 0;
  double discarded = 0.0;  // Σ|c|² dropped since the last reset (settle_counters adds)

  std::array<std::uint64_t, W> support{};
  TestedPolicy tested;
  std::size_t skipped = 0;
  std::size_t block_layers = 0;  // layers applied inside blocks
  bool keep_capacity = false;    // after a block: compaction keeps the arrays' size (apply_block)
  PhaseProfile profile;

  // Partitioned runs.
  Buffer split_rows, export_keys, export_coef, import_keys, import_coef;
  std::set<int> peers;  // devices whose memory this device reads directly

  /// Where export_on_device left each slot's rows in export_keys / export_coef.
  struct ExportLayout {
    std::vector<std::size_t> count, first;
  };
  /// A batch of received rows at device addresses (merge_batches).
  struct Batch {
    std::size_t rows;
    const void* keys;
    const void* coef;
  };

  // ---- memory (device_sum_memory.cc) ----
  Impl(const PauliSum<W, C>& host, int ordinal, const GpuEngineOptions& options);
  ~Impl();
  void release();
  void activate() const { check(cudaSetDevice(device), "cudaSetDevice"); }
  /// The error of an allocation that failed: the bytes asked for and for what, the device's free and
  /// total memory, the terms and bytes the sum holds. `where`: "memory" or "pinned host memory".
  GpuOutOfMemory out_of_memory(std::size_t bytes, const char* what, const char* where) const;
  /// Replaces `buffer` by a fresh block of `bytes` (contents not kept). Throws GpuOutOfMemory (see
  /// out_of_memory) when the device has no room, leaving `buffer` as it was. Every device allocation of
  /// the engine goes through here, and asks AllocationFaults first (tests inject failures there).
  void allocate(Buffer& buffer, std::size_t bytes, const char* what);
  /// cudaMallocHost, with the same errors and fault injection.
  void allocate_pinned(void** ptr, std::size_t bytes, const char* what);
  void free(Buffer& buffer);
  Key* key_ptr() const { return static_cast<Key*>(keys.ptr); }
  void upload(const PauliSum<W, C>& host);
  /// A host copy (canonical order): grouped by bucket on the device (download_by_bucket), or, when the
  /// device has no room for that, sorted into buckets on the host.
  PauliSum<W, C> download(int threads);
  /// The live terms ordered by `result`'s bucket (2^bits of its hash) on the device — a radix sort of
  /// (bucket, index) pairs and a gather — then copied into `result`, which sorts each bucket on `threads`
  /// host threads. About 16 + (key + coefficient) bytes of device memory a stored term for the grouping;
  /// false, with nothing changed, when they cannot be allocated (or the sum is empty).
  bool download_by_bucket(PauliSum<W, C>& result, int bits, int threads);
  /// Grows the term arrays to hold `terms` (keeping the first `stored` when `keep`). GpuOutOfMemory
  /// leaves the arrays holding the sum as before.
  void reserve(std::size_t terms, bool keep);
  /// Join table with room for `terms` entries (load ≤ 2/3) and orbits of `orbit` members, empty.
  /// GpuOutOfMemory leaves it empty and usable at its former size (or a larger one).
  void reserve_table(std::size_t terms, int orbit);
  void reserve_scan(std::size_t n);
  /// Empties the join table after a layer that stopped between insert and write.
  void clear_table();
  void zero_counters();
  /// Reads the layer counters back (a synchronization).
  kernels::LayerCounters read_counters();
  /// Reads the layer counters back at the end of a layer and applies them (appended terms join the sum).
  kernels::LayerCounters settle_counters();
  /// Removes the holes when they pile up (or always with `force`). In place (the live terms past the
  /// first stored − holes fill the holes below: no allocation) unless the arrays are over four times
  /// what the live terms need, in which case they are copied into smaller ones to give memory back
  /// (in place when those cannot be allocated). Only the scan buffers (reserve_scan(stored)) must be
  /// allocated: when they are already, a forced compaction cannot fail for memory. Right after a block
  /// (keep_capacity) the holes are always filled in place. GpuOutOfMemory
  /// (only with `force`) leaves the sum as it was.
  void compact_if_worthwhile(bool force);
  /// The two forms, with the scan buffers reserved for `stored`; the second returns false, changing
  /// nothing, when its arrays cannot be allocated.
  void compact_in_place();
  bool compact_into_smaller_arrays();
  unsigned long long* histogram() const { return static_cast<unsigned long long*>(scratch.ptr); }
  /// Reads the first `bins` words of the device histogram into host_scratch (a synchronization).
  void fetch_histogram(std::size_t bins);
  void read_histogram(std::span<std::uint64_t> counts);

  // ---- layers (device_sum_layers.cc) ----
  kernels::LayerArgs<W> args(const Truncation& truncation) const;
  static kernels::TermProgram program_of(const Truncation& truncation);
  bool tested_for(const Truncation& truncation) const {
    return !tested.must_retest(truncation);
  }
  // The light cone, as in the CPU engine: a layer whose support misses every term's support, and which
  // maps the identity on its support to itself alone, changes nothing.
  bool skips_layer(const PreparedChannel<W>& table, const Truncation& truncation) const;
  void add_support(const PreparedChannel<W>& table);
  static kernels::LocalTable local_table(const PreparedChannel<W>& table);
  static kernels::RotationTable<W> rotation_table(const PreparedChannel<W>& table);
  /// Between a join's insert and write: makes room for every key the write pass can append. The bound
  /// groups · orbit − members (absent orbit members) needs no pass of its own; only when it does not
  /// fit does a count pass give the exact number. Throws GpuOutOfMemory with the table cleared and the
  /// sum unchanged when even that does not fit.
  template <class Count>
  void make_room_for_join(int orbit, Count&& count_pass);
  void rotation_layer(const PreparedChannel<W>& table, const Truncation& truncation);
  void local_join_layer(const PreparedChannel<W>& table, const Truncation& truncation);
  /// After a join's write pass: the patterns outside the join only rescale (or re-test). After the join
  /// (so a failed growth leaves the sum untouched), over the terms that were there before the layer
  /// (`a`: the write pass's arguments; appended terms are past a.size).
  void rescale_outside_join(const kernels::LayerArgs<W>& a, const kernels::LocalTable& t,
                            const Truncation& truncation);
  double apply_layer(const PreparedChannel<W>& table, const Truncation& truncation);
  /// DeviceSum::apply_block. The block's table: its generators, their reduced echelon basis, the
  /// coordinates (block_table); nothing when fewer than two layers qualify.
  std::size_t apply_block(std::span<const PreparedChannel<W>> tables, const Truncation& truncation,
                          std::span<BlockLayer> out);
  static kernels::RotationBlock<W> block_table(std::span<const PreparedChannel<W>> tables, std::size_t limit);
  LayerPassResult finalize_layer(const Truncation& truncation);
  void approx_topn_cut(std::size_t n);
  void topn_cut(std::size_t n);
  double apply_term_truncation(const Truncation& truncation);
  /// Launch::cut (mode, bin, value) over the sum now; returns the Σ|c|² dropped.
  double cut_now(int mode, int bin, double value);

  // ---- partitioned runs: export (device_sum_export.cc) ----
  /// Moves the live terms of other partitions out: by part(key), or with `orbits` (a general local
  /// table) by the partition of each term's orbit representative — part(key) ⊕ part(its delta to the
  /// representative), the delta read from the term's pattern (route_orbits' first step).
  ExportLayout export_on_device(std::span<const PauliString<W>> rows, std::uint32_t self,
                                std::span<const std::uint32_t> offsets, const PreparedChannel<W>* orbits = nullptr);
  /// Whether a remote layer of `table` can run fused with its export: a rotation whose generator g
  /// belongs to the one partner offset (every delta of the layer crosses, so no orbit meets here).
  static bool fuses_rotation_with_export(const PreparedChannel<W>& table, std::span<const PauliString<W>> rows,
                                         std::span<const std::uint32_t> offsets);
  /// The routing of a general table's remote layer fused with its export (JoinExport::slot by delta
  /// pattern), or nothing when it cannot be: not a general local table, too many rows or offsets, or a
  /// realized delta of no listed offset (the two steps then report the stray term).
  static std::optional<kernels::JoinExport<W>> join_export(const PreparedChannel<W>& table,
                                                           std::span<const PauliString<W>> rows,
                                                           std::span<const std::uint32_t> offsets);
  /// apply_layer(table, Truncation()) then export_on_device(rows, self, offsets), fused where it can be:
  /// - a rotation whose generator crosses (fuses_rotation_with_export): one count pass and one pass that
  ///   rescales the anticommuting terms in place and writes their partners straight into the export (no
  ///   join table, no appended terms, no holes);
  /// - a general table (join_export): the join's count and write passes route each new key by its
  ///   delta, leavers straight into the export (never appended, no export pass over the stored terms,
  ///   no holes from them).
  /// Every live term must belong to `self` (the partition driver's invariant between layers).
  ExportLayout apply_and_export(const PreparedChannel<W>& table, std::span<const PauliString<W>> rows,
                                std::uint32_t self, std::span<const std::uint32_t> offsets);
  void remote_rotation_and_export(const PreparedChannel<W>& table, ExportLayout& layout);
  /// DeviceSum::routes_orbits: a general table that fuses with its export, whose offsets with 0 are
  /// closed under ⊕ (then every element of its delta span, the delta of a member to its representative
  /// included, names a partner or none).
  static bool routes_orbits(const PreparedChannel<W>& table, std::span<const PauliString<W>> rows,
                            std::span<const std::uint32_t> offsets);
  ExportLayout export_orbit_members(const PreparedChannel<W>& table, std::span<const PauliString<W>> rows,
                                    std::uint32_t self, std::span<const std::uint32_t> offsets);
  /// DeviceSum::apply_and_export_final: a permutation is the layer with the test, then the export; a
  /// routed general table is the fused join with the test on every output, leavers included.
  ExportLayout apply_and_export_final(const PreparedChannel<W>& table, std::span<const PauliString<W>> rows,
                                      std::uint32_t self, std::span<const std::uint32_t> offsets,
                                      const Truncation& truncation, double& dropped);
  /// The join of a general table with its leavers routed to the export: insert, the routed count pass
  /// (new stayers and leavers per slot, one read-back), room for both, the routed write pass, then the
  /// rescale of the patterns outside the join (they stay: delta 0). Throws GpuOutOfMemory with the
  /// table cleared and the sum unchanged when the room cannot be made.
  void join_and_export(const PreparedChannel<W>& table, kernels::JoinExport<W> e, ExportLayout& layout,
                       const Truncation& truncation);
  /// Export arrays of at least `rows` rows (contents not kept).
  void reserve_export(std::size_t rows);
  std::vector<std::vector<std::byte>> export_partition_rows(std::span<const PauliString<W>> rows,
                                                            std::uint32_t self,
                                                            std::span<const std::uint32_t> offsets);
  /// Copies an export (export_on_device's layout) into one host buffer per slot.
  std::vector<std::vector<std::byte>> download_export(const ExportLayout& layout);
  std::vector<PeerRows> export_partition_rows_on_device(std::span<const PauliString<W>> rows, std::uint32_t self,
                                                        std::span<const std::uint32_t> offsets);
  /// An export (export_on_device's layout) as device addresses.
  std::vector<PeerRows> peer_rows(const ExportLayout& layout) const;

  // ---- partitioned runs: merge and append (device_sum_merge.cc) ----
  /// Room for `total` more terms, their key index, and import buffers of `largest` rows.
  void reserve_merge(std::size_t total, std::size_t largest);
  static std::pair<std::size_t, std::size_t> total_and_largest(std::span<const std::uint64_t> counts);
  /// Merges `batches` batches of rows; source(k) gives batch k's row count and device addresses (it may
  /// fill the import buffers, which hold `largest` rows, and return them).
  template <class Source>
  void merge_batches(std::size_t batches, std::size_t total, std::size_t largest, Source&& source);
  /// Room for `total` appended rows (RowArrival::append): the arrays only, no key index. The holes go
  /// first: a hole keeps its key, which an appended row may carry (a member or an output coming back
  /// to the partition it left), and keys must stay distinct.
  void reserve_append(std::size_t total);
  /// RowArrival::append: the holes compacted away and room made (reserve_append), then place(k, keys,
  /// coefficients) enqueues batch k's counts[k] rows into those device addresses on the stream (every
  /// k, empty batches included: an NCCL receive is a swap), then one pass over the new rows adds their
  /// support to the light cone. The rows are final: the tested state of the sum does not change.
  template <class Place>
  void append_batches(std::span<const std::uint64_t> counts, Place&& place);
  /// Host buffers in export_partition_rows' layout: their row counts (std::runtime_error for a size
  /// that is not a whole number of rows).
  static std::vector<std::uint64_t> rows_in(std::span<const std::span<const std::byte>> buffers);
  void merge_partition_rows(std::span<const std::span<const std::byte>> buffers, RowArrival arrival);
  /// Whether kernels on this device can read device `other`'s memory (enabling peer access once).
  bool reads_directly(int other);
  void merge_received(std::span<const std::uint64_t> counts,
                      const std::function<void(std::size_t, void*, void*, void*)>& receive, RowArrival arrival);
  void merge_partition_rows(std::span<const PeerRows> sources, RowArrival arrival);
};

}  // namespace paulistrings::gpu
