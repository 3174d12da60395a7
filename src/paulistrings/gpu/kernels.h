#pragma once
// The GPU engine's kernels, as seen from the host engine (device_sum_*.cc, compiled by g++) and
// implemented in kernels.cuh (nvcc; instantiated once per width and coefficient type by
// kernels_instance.cu). Only plain structs and launch functions cross this line: nvcc includes no
// paulistrings header but this one and the error types (errors.h, cuda_check.h), and g++ sees no CUDA
// type here but cudaStream_t. Every launch function throws GpuError when its launch fails.
//
// Device layout of a sum: keys[i] = {x[W], z[W]} (the layout of PauliString<W>), coef[i] a double or
// a {re, im} pair (the layout of std::complex<double>). Keys are unique; order is unspecified. A term
// whose coefficient is exactly zero is a hole: its key still counts as present (layers may write
// into it again) but it is not part of the sum; holes are compacted away when they pile up.

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace paulistrings::gpu::kernels {

template <int W>
struct Key {
  std::uint64_t x[W];
  std::uint64_t z[W];
};

inline constexpr int kMaxProgram = 16;

/// The per-term truncation test in postfix form; length 0 keeps everything.
struct TermProgram {
  enum Op : std::uint8_t { keep_all = 0, coeff = 1, weight = 2, all_of = 3, any_of = 4 };
  int length = 0;
  bool uses_weight = false;
  std::uint8_t op[kMaxProgram] = {};
  double epsilon_squared[kMaxProgram] = {};  ///< coeff: keep |c|² > ε²; negative keeps all
  std::uint32_t max_weight[kMaxProgram] = {};
};

/// What a layer's kernels add up on the device (zeroed before each layer, read back after it).
struct LayerCounters {
  long long hole_change;        ///< terms that became exact zeros minus zeros that became nonzero
  unsigned long long dropped;   ///< terms removed by the truncation test
  double discarded;             ///< Σ|c|² of those terms
  unsigned long long appended;  ///< terms written past the old end (the join's append cursor)
  unsigned long long groups;    ///< join slots claimed this layer (entries of JoinTable::groups)
  unsigned long long members;   ///< terms the join's insert placed in a slot
  unsigned long long fresh;     ///< join count pass: new keys the write pass will append
};

/// A channel on ≤ 2 qubits. Input pattern s (2 bits a qubit: x | z<<1, first qubit low) either
/// stays put (join[s] = 0: its only output is s itself, and nothing else maps to s) or joins its
/// orbit under the span S of the realized deltas: s = rep[s] ^ combo[coord[s]], orbit_size = |S|.
/// amp_re/amp_im[out][in] is the pattern transfer matrix (zero where there is no output). For a
/// permutation table image[s] is the single output pattern of s (0xff: none).
struct LocalTable {
  int support_size = 1;
  int qubit[2] = {0, 0};
  int orbit_size = 1;
  std::uint8_t join[16] = {};
  std::uint8_t rep[16] = {};
  std::uint8_t coord[16] = {};
  std::uint8_t combo[16] = {};
  std::uint8_t image[16] = {};
  double amp_re[16][16] = {};
  double amp_im[16][16] = {};
};

/// A Pauli rotation of any weight: anticommuting Q → cos θ·Q + sin_signed·s(Q)·(g ⊕ Q) with
/// s(Q) = +1 when g·Q = −i (g ⊕ Q) and −1 when g·Q = +i (g ⊕ Q). The pivot is one bit of g (word
/// pivot_word of the concatenated x|z words): orbits {Q, Q ⊕ g} are keyed by the member with it clear.
template <int W>
struct RotationTable {
  Key<W> generator;
  double cos_theta = 1.0;
  double sin_signed = 0.0;
  int pivot_word = 0;
  std::uint64_t pivot_bit = 1;
};

/// A block of 2 to 4 consecutive Pauli rotations with linearly independent generators, taken as one
/// join (DeviceSum's apply_block, docs/gpu-engine.md "Blocks of rotations"). Their span S has the
/// reduced echelon basis `basis` (basis[j] holds bit pivot_bit[j] of word pivot_word[j] of the
/// concatenated x|z words, which no other basis vector holds): a term's orbit representative is its key
/// with every pivot bit cleared by the basis, and its coordinate, in generator terms (bit r: g_r taken),
/// is coord_of[its pivot bits]. Each orbit applies the rotations in order, each one as RotationTable says,
/// with the per-term test on the two outputs of every pair. odd[r] bit j: g_j anticommutes with g_r.
/// need_x / need_z: the key words the anticommutation test reads (a generator has z resp. x bits there).
/// Per rotation r, the write pass adds to per_layer[r] the change in live terms (as a signed count) and
/// to per_layer[kMaxRotations + r] the Σ|c|² the test dropped (as a double's bits).
template <int W>
struct RotationBlock {
  static constexpr int kMaxRotations = 4;
  int rotations = 0;
  Key<W> generator[kMaxRotations] = {};
  double cos_theta[kMaxRotations] = {};
  double sin_signed[kMaxRotations] = {};
  std::uint32_t odd[kMaxRotations] = {};
  Key<W> basis[kMaxRotations] = {};
  int pivot_word[kMaxRotations] = {};
  std::uint64_t pivot_bit[kMaxRotations] = {};
  std::uint8_t coord_of[1 << kMaxRotations] = {};
  bool need_x[W] = {};
  bool need_z[W] = {};
  unsigned long long* per_layer = nullptr;
};

/// The per-layer hash-join table: `capacity` slots (a power of two), each an owner (term index + 1,
/// 0 = empty) and orbit_size member entries (term index + 1 by orbit coordinate, 0 = absent). Claimed
/// slots are listed in `groups` (LayerCounters::groups of them). The write pass appends new keys at
/// LayerCounters::appended (a warp-aggregated cursor) and leaves every slot empty.
struct JoinTable {
  std::uint32_t* owner = nullptr;
  std::uint32_t* members = nullptr;
  std::uint32_t* groups = nullptr;
  std::size_t capacity = 0;
};

/// Everything one layer kernel needs.
template <int W>
struct LayerArgs {
  Key<W>* keys = nullptr;
  void* coef = nullptr;
  std::size_t size = 0;  ///< terms stored (holes included)
  TermProgram program;
  LayerCounters* counters = nullptr;
  JoinTable table;
  std::size_t append_base = 0;  ///< first index for appended outputs
};

inline constexpr int kMaxExportSlots = 16;

/// A partitioned run's split (partition/): part(key) bit j = parity(rows[j] AND key); a live term of a
/// partition other than `self` belongs to export slot k when part(key) ⊕ self = offsets[k]. By orbit
/// (by_pattern): the slot is read from the term's support pattern instead — pattern_slot[s], the slot
/// of the partition that holds the orbit's representative (−1: stays here; `slots`: a stray).
template <int W>
struct PartitionSplit {
  const Key<W>* rows = nullptr;  ///< device array of `bits` keys
  int bits = 0;
  std::uint32_t self = 0;
  int slots = 0;
  std::uint32_t offsets[kMaxExportSlots] = {};
  bool by_pattern = false;
  int support_size = 1;
  int qubit[2] = {0, 0};
  std::int8_t pattern_slot[16] = {};
  /// Device array of slots + 1 counters: terms per slot (count pass) or each slot's write cursor
  /// (write pass, set to the slot's first row); entry `slots` counts terms of no listed offset.
  unsigned long long* cursor = nullptr;
};

/// A remote general layer fused with its export (DeviceSum::apply_and_export): every live term lies
/// in one partition, so an output's partition offset is that of its delta pattern d from any live
/// member of its orbit; slot[d] < slots: the output leaves for export slot slot[d] (a new key, never
/// stored here), otherwise it stays. cursor: `slots` counters — rows per slot (count pass) or each
/// slot's write position in out_keys / out_coef (write pass, set to the slot's first row).
/// final_outputs: every orbit is whole here and its representative lies here (route_orbits' second
/// step, DeviceSum::apply_and_export_final), so outputs are routed by their delta from the
/// representative — stored members too, which may lie elsewhere — and are final: the leavers meet
/// args.program before they leave (dropped ones counted, never exported). Otherwise the leavers go
/// untested (the receiver adds the partner's share of the orbit first).
template <int W>
struct JoinExport {
  int slots = 0;
  bool final_outputs = false;
  std::uint8_t slot[16] = {};
  unsigned long long* cursor = nullptr;
  Key<W>* out_keys = nullptr;
  void* out_coef = nullptr;
};

/// Launches, per width W and coefficient kind (Cx = complex). Every launch is asynchronous on
/// `stream`; sizes come from the host.
template <int W, bool Cx>
struct Launch {
  static void rescale(const LayerArgs<W>& args, const LocalTable& table, cudaStream_t stream);
  static void permute(const LayerArgs<W>& args, const LocalTable& table, cudaStream_t stream);
  static void join_insert_local(const LayerArgs<W>& args, const LocalTable& table, cudaStream_t stream);
  /// Adds to LayerCounters::fresh the keys the write pass would append (only needed when the bound
  /// groups · orbit_size − members does not fit in memory).
  static void join_count_local(const LayerArgs<W>& args, const LocalTable& table, cudaStream_t stream);
  static void join_write_local(const LayerArgs<W>& args, const LocalTable& table, cudaStream_t stream);
  /// The same two passes routed by `e` (JoinExport): the count pass adds the stayers' new keys to
  /// LayerCounters::fresh and the leavers to e.cursor[slot]; the write pass appends the stayers and
  /// writes the leavers at e.cursor[slot].
  static void join_count_local_export(const LayerArgs<W>& args, const LocalTable& table, const JoinExport<W>& e,
                                      cudaStream_t stream);
  static void join_write_local_export(const LayerArgs<W>& args, const LocalTable& table, const JoinExport<W>& e,
                                      cudaStream_t stream);
  static void join_insert_rotation(const LayerArgs<W>& args, const RotationTable<W>& table,
                                   cudaStream_t stream);
  static void join_count_rotation(const LayerArgs<W>& args, const RotationTable<W>& table,
                                  cudaStream_t stream);
  static void join_write_rotation(const LayerArgs<W>& args, const RotationTable<W>& table,
                                  cudaStream_t stream);
  /// A block of rotations (RotationBlock): insert every term that anticommutes with one of the
  /// generators into the slot of its orbit representative (members at its coordinate; the table has
  /// 2^rotations members a slot); write: apply the rotations to each orbit in order, update stored
  /// members in place, append new keys, empty the slot. There is no count pass: a block the arrays
  /// cannot grow for is declined before its write.
  static void join_insert_block(const LayerArgs<W>& args, const RotationBlock<W>& block, cudaStream_t stream);
  static void join_write_block(const LayerArgs<W>& args, const RotationBlock<W>& block, cudaStream_t stream);
  /// Partitioned runs. export_count counts the live terms of each export slot (and strays) into
  /// split.cursor; export_write moves them to out_keys/out_coef at the slots' cursors and leaves holes
  /// (LayerCounters::hole_change).
  static void export_count(const LayerArgs<W>& args, const PartitionSplit<W>& split, cudaStream_t stream);
  static void export_write(const LayerArgs<W>& args, const PartitionSplit<W>& split, Key<W>* out_keys,
                           void* out_coef, cudaStream_t stream);
  /// Enters every stored key (holes too) into args.table.owner, keyed by the whole key.
  static void key_index(const LayerArgs<W>& args, cudaStream_t stream);
  /// Adds `rows` terms (keys distinct among themselves) to the sum indexed by key_index: a key found
  /// gets its coefficient added in place, a new key is appended at LayerCounters::appended (past
  /// args.append_base) and entered in the index. Counts hole changes.
  /// ORs x|z of every row into support[W] (the light cone). row_keys / row_coef may live on a peer
  /// device with peer access enabled.
  static void merge_rows(const LayerArgs<W>& args, const Key<W>* row_keys, const void* row_coef, std::size_t rows,
                         unsigned long long* support, cudaStream_t stream);
  /// Rows appended in place (DeviceSum::merge_partition_rows with RowArrival::append): ORs x|z of the
  /// `rows` keys from args.keys[first] into support[W] and counts the exact zeros among them as holes.
  static void appended_rows(const LayerArgs<W>& args, std::size_t first, std::size_t rows,
                            unsigned long long* support, cudaStream_t stream);
  /// The per-term test of args.program over every live term (dropped terms become holes).
  static void term_test(const LayerArgs<W>& args, cudaStream_t stream);
  /// Counts live terms per 11-bit exponent of |c|² into histogram[2048] (zeroed here).
  static void exponent_histogram(const void* coef, std::size_t size, unsigned long long* histogram,
                                 cudaStream_t stream);
  /// Radix-select pass: counts live, non-NaN terms whose |c|² bits match `prefix` on `prefix_mask`
  /// by the 8-bit digit at `shift` into histogram[256] (zeroed here).
  static void digit_histogram(const void* coef, std::size_t size, std::uint64_t prefix, std::uint64_t prefix_mask,
                              int shift, unsigned long long* histogram, cudaStream_t stream);
  /// Layer cut: mode 0 drops live terms with exponent bin < bin; mode 1 keeps |c|² ≥ value; mode 2
  /// keeps |c|² > value; mode 3 drops every live term. Dropped terms become holes (counted).
  static void cut(void* coef, std::size_t size, int mode, int bin, double value,
                  LayerCounters* counters, cudaStream_t stream);
  /// Writes flags[i] = (term i is live) for i < size.
  static void live_flags(const void* coef, std::size_t size, std::uint32_t* flags, cudaStream_t stream);
  /// Moves live terms to out_keys/out_coef[positions[i]] (positions: exclusive scan of the flags).
  static void compact(const Key<W>* keys, const void* coef, std::size_t size, const std::uint32_t* positions,
                      Key<W>* out_keys, void* out_coef, cudaStream_t stream);
  /// The download in bucket order (DeviceSum's download): bucket[i] = the host sum's bucket of key i,
  /// its hash over the `bits` ≤ 32 rows in `rows` (device memory), or 2^bits for a hole; index[i] = i.
  static void bucket_of(const Key<W>* keys, const void* coef, std::size_t size, const Key<W>* rows, int bits,
                        std::uint32_t* bucket, std::uint32_t* index, cudaStream_t stream);
  /// out_keys/out_coef[k] = term index[k], for k < size.
  static void gather(const Key<W>* keys, const void* coef, const std::uint32_t* index, std::size_t size,
                     Key<W>* out_keys, void* out_coef, cudaStream_t stream);
  /// Compaction in place, for a sum of `live` live terms among `size` stored: misplaced_flags marks the
  /// holes below `live` and the live terms from `live` on; after an exclusive scan of the flags into
  /// `ranks`, fill_holes moves the k-th live term from `live` on into the k-th hole below it (`holes`:
  /// scratch of at least size − live entries; it may be the flags' array). Leaves the live terms in
  /// [0, live), in another order.
  static void misplaced_flags(const void* coef, std::size_t live, std::size_t size, std::uint32_t* flags,
                              cudaStream_t stream);
  static void fill_holes(Key<W>* keys, void* coef, std::size_t live, std::size_t size, const std::uint32_t* ranks,
                         std::uint32_t* holes, cudaStream_t stream);
  /// A rotation whose generator g belongs to another partition (no orbit meets here): each live term Q
  /// that anticommutes with g keeps cos θ·c in place (args.program applied; hole changes counted), and
  /// its partner (Q ⊕ g, sin_signed·s(Q)·c, when nonzero) is written to out_keys/out_coef at *cursor
  /// (one atomic per warp). The count pass only advances *cursor by the number of partners.
  static void remote_rotation_count(const LayerArgs<W>& args, const RotationTable<W>& table,
                                    unsigned long long* cursor, cudaStream_t stream);
  static void remote_rotation_write(const LayerArgs<W>& args, const RotationTable<W>& table,
                                    unsigned long long* cursor, Key<W>* out_keys, void* out_coef,
                                    cudaStream_t stream);
};

/// Scratch size and run of an exclusive sum over n uint32 (in and out may alias), and a uint64 total of
/// n uint32. temp == nullptr asks for the scratch size.
void exclusive_sum(void* temp, std::size_t& temp_bytes, const std::uint32_t* in, std::uint32_t* out, std::size_t n,
                   cudaStream_t stream);
void total_sum(void* temp, std::size_t& temp_bytes, const std::uint32_t* in, unsigned long long* out, std::size_t n,
               cudaStream_t stream);

/// Scratch size and run of a stable radix sort of n (key, value) pairs by the low `end_bit` bits of the
/// key (temp == nullptr asks for the scratch size), and the bucket offsets of keys so sorted:
/// start[b] = the first position whose key is ≥ b, for b ≤ buckets (start[buckets] = the count of keys
/// below `buckets`).
void sort_pairs(void* temp, std::size_t& temp_bytes, const std::uint32_t* keys_in, std::uint32_t* keys_out,
                const std::uint32_t* values_in, std::uint32_t* values_out, std::size_t n, int end_bit,
                cudaStream_t stream);
void bucket_starts(const std::uint32_t* sorted, std::size_t n, std::size_t buckets, unsigned long long* start,
                   cudaStream_t stream);

/// Number of SMs of the current device, for grid sizing.
int multiprocessors();

}  // namespace paulistrings::gpu::kernels
