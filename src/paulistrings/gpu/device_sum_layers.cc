// DeviceSum<W, C>::Impl's layers (device_sum_impl.h): apply_layer — rescale and permutation in place,
// rotations and general tables as a hash join on the orbit representative — with the per-term test
// fused in, finalize_layer's topn / approx_topn cuts on the device, and the per-term test alone.

#include "paulistrings/gpu/device_sum_impl.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace paulistrings::gpu {
namespace {

/// The device copy of a key (kernels::Key<W> has PauliString<W>'s layout).
template <int W>
kernels::Key<W> device_key(const PauliString<W>& p) {
  kernels::Key<W> k;
  for (int w = 0; w < W; ++w) {
    k.x[w] = p.x[w];
    k.z[w] = p.z[w];
  }
  return k;
}
/// Word `word` of a key's x words followed by its z words (0..W−1: x, W..2W−1: z), as pivots count them.
template <int W>
std::uint64_t xz_word(const PauliString<W>& p, int word) {
  return word < W ? p.x[word] : p.z[word - W];
}
/// The lowest set bit of p as (word, mask); false, leaving both as they are, for the identity.
template <int W>
bool lowest_set_bit(const PauliString<W>& p, int& word, std::uint64_t& mask) {
  for (int w = 0; w < 2 * W; ++w) {
    if (const std::uint64_t bits = xz_word(p, w)) {
      word = w;
      mask = bits & (~bits + 1);
      return true;
    }
  }
  return false;
}

}  // namespace

template <int W, Coefficient C>
kernels::LayerArgs<W> DeviceSum<W, C>::Impl::args(const Truncation& truncation) const {
  kernels::LayerArgs<W> a;
  a.keys = key_ptr();
  a.coef = coef.ptr;
  a.size = stored;
  a.program = program_of(truncation);
  a.counters = static_cast<kernels::LayerCounters*>(counters.ptr);
  a.table.owner = static_cast<std::uint32_t*>(owner.ptr);
  a.table.members = static_cast<std::uint32_t*>(members.ptr);
  a.table.groups = static_cast<std::uint32_t*>(groups.ptr);
  a.table.capacity = table_capacity;
  a.append_base = stored;
  return a;
}

template <int W, Coefficient C>
kernels::TermProgram DeviceSum<W, C>::Impl::program_of(const Truncation& truncation) {
  kernels::TermProgram program;
  if (!truncation.has_term_test()) return program;
  const auto steps = truncation.term_test_program();
  if (steps.size() > static_cast<std::size_t>(kernels::kMaxProgram)) {
    throw std::invalid_argument("the GPU engine evaluates truncation policies of at most " +
                                std::to_string(kernels::kMaxProgram) + " nodes; this one has " +
                                std::to_string(steps.size()));
  }
  program.length = static_cast<int>(steps.size());
  for (std::size_t k = 0; k < steps.size(); ++k) {
    using Op = Truncation::TermTestStep::Op;
    switch (steps[k].op) {
      case Op::coeff:
        program.op[k] = kernels::TermProgram::coeff;
        program.epsilon_squared[k] = steps[k].epsilon < 0.0 ? -1.0 : steps[k].epsilon * steps[k].epsilon;
        break;
      case Op::weight:
        program.op[k] = kernels::TermProgram::weight;
        program.max_weight[k] = static_cast<std::uint32_t>(std::min<std::size_t>(steps[k].max_weight, 1u << 30));
        program.uses_weight = true;
        break;
      case Op::all_of:
        program.op[k] = kernels::TermProgram::all_of;
        break;
      case Op::any_of:
        program.op[k] = kernels::TermProgram::any_of;
        break;
      default:
        program.op[k] = kernels::TermProgram::keep_all;
    }
  }
  return program;
}

template <int W, Coefficient C>
bool DeviceSum<W, C>::Impl::skips_layer(const PreparedChannel<W>& table, const Truncation& truncation) const {
  if (!tested_for(truncation)) return false;
  if (table.form == PreparedChannel<W>::Form::rotation) {
    for (int w = 0; w < W; ++w) {
      if ((table.generator.x[w] | table.generator.z[w]) & support[w]) return false;
    }
    return true;
  }
  if (table.fanout[0] != 1 || table.outputs[0][0].pattern != 0 || table.outputs[0][0].amplitude != Complex(1.0))
    return false;
  for (int i = 0; i < table.support_size; ++i) {
    const Qubit q = table.qubits[static_cast<std::size_t>(i)];
    if ((support[q / 64] >> (q % 64)) & 1) return false;
  }
  return true;
}

template <int W, Coefficient C>
void DeviceSum<W, C>::Impl::add_support(const PreparedChannel<W>& table) {
  if (table.form == PreparedChannel<W>::Form::rotation) {
    for (int w = 0; w < W; ++w) support[w] |= table.generator.x[w] | table.generator.z[w];
    return;
  }
  for (int i = 0; i < table.support_size; ++i) {
    const Qubit q = table.qubits[static_cast<std::size_t>(i)];
    support[q / 64] |= std::uint64_t{1} << (q % 64);
  }
}

template <int W, Coefficient C>
kernels::LocalTable DeviceSum<W, C>::Impl::local_table(const PreparedChannel<W>& table) {
  kernels::LocalTable t;
  t.support_size = table.support_size;
  t.qubit[0] = static_cast<int>(table.qubits[0]);
  t.qubit[1] = static_cast<int>(table.support_size == 2 ? table.qubits[1] : table.qubits[0]);
  const int patterns = table.support_size == 2 ? 16 : 4;
  for (int s = 0; s < 16; ++s) t.image[s] = 0xff;
  for (int s = 0; s < patterns; ++s) {
    for (int k = 0; k < table.fanout[s]; ++k) {
      const auto& o = table.outputs[s][k];
      t.amp_re[o.pattern][s] = o.amplitude.real();
      t.amp_im[o.pattern][s] = o.amplitude.imag();
    }
    if (table.fanout[s] == 1) t.image[s] = table.outputs[s][0].pattern;
  }
  // Reduced echelon basis of the span of the realized deltas (pivot = highest bit).
  std::vector<int> basis;
  for (std::uint8_t d : table.delta_patterns) {
    int v = d;
    for (int b : basis) {
      if (v & (1 << (std::bit_width(static_cast<unsigned>(b)) - 1))) v ^= b;
    }
    if (v == 0) continue;
    const int pivot = 1 << (std::bit_width(static_cast<unsigned>(v)) - 1);
    for (int& b : basis) {
      if (b & pivot) b ^= v;
    }
    basis.push_back(v);
  }
  t.orbit_size = 1 << basis.size();
  for (int k = 0; k < t.orbit_size; ++k) {
    int combo = 0;
    for (std::size_t i = 0; i < basis.size(); ++i) {
      if ((k >> i) & 1) combo ^= basis[i];
    }
    t.combo[k] = static_cast<std::uint8_t>(combo);
  }
  for (int s = 0; s < patterns; ++s) {
    int rep = s, coord = 0;
    for (std::size_t i = 0; i < basis.size(); ++i) {
      const int pivot = 1 << (std::bit_width(static_cast<unsigned>(basis[i])) - 1);
      if (s & pivot) {
        rep ^= basis[i];
        coord |= 1 << i;
      }
    }
    t.rep[s] = static_cast<std::uint8_t>(rep);
    t.coord[s] = static_cast<std::uint8_t>(coord);
    // A pattern that maps only to itself and receives from nobody else is rescaled in place.
    bool isolated = true;
    for (int o = 0; o < patterns; ++o) {
      if (o == s) continue;
      if (t.amp_re[o][s] != 0.0 || t.amp_im[o][s] != 0.0 || t.amp_re[s][o] != 0.0 || t.amp_im[s][o] != 0.0)
        isolated = false;
    }
    t.join[s] = isolated ? 0 : 1;
  }
  return t;
}

template <int W, Coefficient C>
kernels::RotationTable<W> DeviceSum<W, C>::Impl::rotation_table(const PreparedChannel<W>& table) {
  kernels::RotationTable<W> t;
  t.generator = device_key(table.generator);
  t.cos_theta = table.cos_theta;
  t.sin_signed = table.sin_signed;
  lowest_set_bit(table.generator, t.pivot_word, t.pivot_bit);
  return t;
}

template <int W, Coefficient C>
template <class Count>
void DeviceSum<W, C>::Impl::make_room_for_join(int orbit, Count&& count_pass) {
  // bound ≤ (orbit − 1) · members ≤ (orbit − 1) · stored: when that already fits, or a sum that
  // small is cheap to over-allocate, the read-back (a synchronization) is skipped. That is
  // what keeps the many layers of a small sum cheap.
  const std::size_t worst = stored * static_cast<std::size_t>(orbit - 1);
  if (stored + worst <= capacity) return;
  if ((stored + worst) * (sizeof(Key) + sizeof(C)) <= kEagerReserveBytes) {
    try {
      reserve(stored + worst, true);
      return;
    } catch (const GpuOutOfMemory&) {
      // fall through to the measured bound
    }
  }
  const kernels::LayerCounters c = read_counters();
  const std::size_t bound = static_cast<std::size_t>(c.groups) * static_cast<std::size_t>(orbit) -
                            static_cast<std::size_t>(c.members);
  if (stored + bound <= kMaxStoredTerms) {
    try {
      reserve(stored + bound, true);
      return;
    } catch (const GpuOutOfMemory&) {
      // fall through to the exact count
    }
  }
  try {
    count_pass();
    const std::size_t fresh = static_cast<std::size_t>(read_counters().fresh);
    if (stored + fresh > kMaxStoredTerms) {
      throw GpuOutOfMemory("this layer would hold " + std::to_string(stored + fresh) +
                           " terms on one device, over the limit of " + std::to_string(kMaxStoredTerms));
    }
    reserve(stored + fresh, true);
  } catch (...) {
    clear_table();
    throw;
  }
}

template <int W, Coefficient C>
void DeviceSum<W, C>::Impl::rotation_layer(const PreparedChannel<W>& table, const Truncation& truncation) {
  const auto t = rotation_table(table);
  reserve_table(stored, 2);
  Launch::join_insert_rotation(args(truncation), t, stream);  // writes only the table
  profile.mark(stream, "rotation insert");
  make_room_for_join(2, [&] { Launch::join_count_rotation(args(truncation), t, stream); });
  profile.mark(stream, "join room");
  // Nothing of the sum has changed up to here, so a failed growth leaves it as it was.
  const kernels::LayerArgs<W> a = args(truncation);  // args again: the arrays may have moved
  Launch::join_write_rotation(a, t, stream);
  profile.mark(stream, "rotation write");
  if (!tested_for(truncation)) {
    // Commuting terms are not rewritten: a policy new to the sum tests them here, after the write. The
    // test runs over the terms that were there before the layer (a.size); the outputs among them were
    // tested as they were written and pass again unchanged.
    Launch::term_test(a, stream);
    profile.mark(stream, "unchanged term test");
  }
}

template <int W, Coefficient C>
void DeviceSum<W, C>::Impl::local_join_layer(const PreparedChannel<W>& table, const Truncation& truncation) {
  const kernels::LocalTable t = local_table(table);
  reserve_table(stored, t.orbit_size);
  kernels::LayerArgs<W> a = args(truncation);
  Launch::join_insert_local(a, t, stream);
  profile.mark(stream, "local insert");
  make_room_for_join(t.orbit_size, [&] { Launch::join_count_local(args(truncation), t, stream); });
  profile.mark(stream, "join room");
  a = args(truncation);
  Launch::join_write_local(a, t, stream);
  profile.mark(stream, "local write");
  rescale_outside_join(a, t, truncation);
}

template <int W, Coefficient C>
void DeviceSum<W, C>::Impl::rescale_outside_join(const kernels::LayerArgs<W>& a, const kernels::LocalTable& t,
                                                 const Truncation& truncation) {
  bool rescale_needed = !tested_for(truncation);
  for (int s = 0; s < 16; ++s) {
    if (!t.join[s] && (t.amp_re[s][s] != 1.0 || t.amp_im[s][s] != 0.0)) rescale_needed = true;
  }
  if (rescale_needed) Launch::rescale(a, t, stream);
}

template <int W, Coefficient C>
double DeviceSum<W, C>::Impl::apply_layer(const PreparedChannel<W>& table, const Truncation& truncation) {
  activate();
  keep_capacity = false;
  profile.start(stream);
  if (skips_layer(table, truncation)) {
    ++skipped;
    profile.mark(stream, "skipped layer");
    return 0.0;
  }
  zero_counters();
  discarded = 0.0;
  if (table.form == PreparedChannel<W>::Form::rotation) {
    rotation_layer(table, truncation);
  } else if (table.table_class == TableClass::key_preserving) {
    Launch::rescale(args(truncation), local_table(table), stream);
    profile.mark(stream, "rescale");
  } else if (table.table_class == TableClass::permutation) {
    const kernels::LocalTable t = local_table(table);
    bool vanishing = false;  // a pattern with no image: its terms vanish and their keys must go
    for (int s = 0; s < (table.support_size == 2 ? 16 : 4); ++s) vanishing |= t.image[s] == 0xff;
    if (vanishing) {
      compact_if_worthwhile(true);
      // The compaction after the permutation then needs no allocation, so it cannot fail for memory
      // once the sum has changed.
      reserve_scan(stored);
    }
    Launch::permute(args(truncation), t, stream);
    profile.mark(stream, "permute");
    if (vanishing) {
      settle_counters();
      compact_if_worthwhile(true);
      zero_counters();
    }
  } else {
    local_join_layer(table, truncation);
  }
  settle_counters();
  profile.mark(stream, "settle");
  tested.remember(truncation);
  if (table.table_class != TableClass::key_preserving) add_support(table);
  compact_if_worthwhile(false);
  profile.mark(stream, "compact");
  return discarded;
}

template <int W, Coefficient C>
kernels::RotationBlock<W> DeviceSum<W, C>::Impl::block_table(std::span<const PreparedChannel<W>> tables,
                                                             std::size_t limit) {
  using Block = kernels::RotationBlock<W>;
  Block t;
  std::array<PauliString<W>, Block::kMaxRotations> basis{};
  std::array<std::uint32_t, Block::kMaxRotations> combo{};  // basis[j] = ⊕ of the generators combo[j] names
  int r = 0;
  limit = std::min<std::size_t>(limit, Block::kMaxRotations);
  for (; static_cast<std::size_t>(r) < std::min(limit, tables.size()); ++r) {
    const PreparedChannel<W>& table = tables[r];
    if (table.form != PreparedChannel<W>::Form::rotation) break;
    // Reduce the generator by the basis; a generator in the span of the earlier ones ends the block.
    PauliString<W> v = table.generator;
    std::uint32_t made = 1u << r;
    for (int j = 0; j < r; ++j) {
      if (xz_word(v, t.pivot_word[j]) & t.pivot_bit[j]) {
        v ^= basis[j];
        made ^= combo[j];
      }
    }
    int word = 0;
    std::uint64_t pivot = 0;
    if (!lowest_set_bit(v, word, pivot)) break;
    for (int j = 0; j < r; ++j) {  // the new pivot leaves the earlier vectors: the basis stays reduced
      if (xz_word(basis[j], word) & pivot) {
        basis[j] ^= v;
        combo[j] ^= made;
      }
    }
    basis[r] = v;
    combo[r] = made;
    t.pivot_word[r] = word;
    t.pivot_bit[r] = pivot;
    t.generator[r] = device_key(table.generator);
    t.cos_theta[r] = table.cos_theta;
    t.sin_signed[r] = table.sin_signed;
  }
  for (int j = 0; j < r; ++j) t.basis[j] = device_key(basis[j]);
  t.rotations = r;
  for (int e = 0; e < (1 << r); ++e) {  // pivot pattern e (bit j: basis[j] taken) in generator terms
    std::uint32_t c = 0;
    for (int j = 0; j < r; ++j) {
      if ((e >> j) & 1) c ^= combo[j];
    }
    t.coord_of[e] = static_cast<std::uint8_t>(c);
  }
  for (int a = 0; a < r; ++a) {
    const PauliString<W>& ga = tables[a].generator;
    for (int b = 0; b < r; ++b) {
      const bool anticommute = !ga.commutes_with(tables[b].generator);
      t.odd[b] |= static_cast<std::uint32_t>(anticommute) << a;
    }
    for (int w = 0; w < W; ++w) {
      t.need_x[w] = t.need_x[w] || t.generator[a].z[w] != 0;
      t.need_z[w] = t.need_z[w] || t.generator[a].x[w] != 0;
    }
  }
  return t;
}

template <int W, Coefficient C>
std::size_t DeviceSum<W, C>::Impl::apply_block(std::span<const PreparedChannel<W>> tables,
                                               const Truncation& truncation, std::span<BlockLayer> out) {
  if (!blocks || stored == 0 || !tested_for(truncation)) return 0;
  kernels::RotationBlock<W> t = block_table(tables, out.size());
  if (t.rotations < 2) return 0;
  const std::size_t taken = static_cast<std::size_t>(t.rotations);
  const int orbit = 1 << t.rotations;
  activate();
  profile.start(stream);
  zero_counters();
  discarded = 0.0;
  // Per rotation: the change in live terms, then the weight dropped (the pass scratch's first words).
  t.per_layer = histogram();
  check(cudaMemsetAsync(t.per_layer, 0,
                        2 * kernels::RotationBlock<W>::kMaxRotations * sizeof(unsigned long long), stream),
        "memset block counters");
  const std::size_t live_before = stored - holes;
  reserve_table(stored, orbit);
  Launch::join_insert_block(args(truncation), t, stream);  // writes only the table
  profile.mark(stream, "block insert");
  // When neither the worst case nor the bound groups · 2^rotations − members can be allocated, the block
  // is declined (the table emptied, nothing changed) and the layers run one at a time, with their exact
  // counts when they need them.
  struct Declined {};
  try {
    make_room_for_join(orbit, [] { throw Declined{}; });
  } catch (const Declined&) {
    return 0;
  }
  profile.mark(stream, "join room");
  // Nothing of the sum has changed up to here, so a failed growth leaves it as it was.
  Launch::join_write_block(args(truncation), t, stream);
  profile.mark(stream, "block write");
  settle_counters();
  fetch_histogram(2 * kernels::RotationBlock<W>::kMaxRotations);
  long long live = static_cast<long long>(live_before);
  for (std::size_t r = 0; r < taken; ++r) {
    live += static_cast<long long>(host_scratch[r]);
    out[r].terms_out = static_cast<std::size_t>(live);
    out[r].discarded_weight =
        std::bit_cast<double>(host_scratch[kernels::RotationBlock<W>::kMaxRotations + r]);
  }
  profile.mark(stream, "settle");
  tested.remember(truncation);
  for (std::size_t r = 0; r < taken; ++r) add_support(tables[r]);
  // The room a block made is kept for the next one: arrays grown past four times the live terms (the
  // bound counts every absent orbit member) and shrunk by the compaction after every block would be
  // copied twice a block (docs/gpu-engine.md, "Blocks of rotations"). The next single layer's compaction
  // gives the memory back.
  keep_capacity = true;
  compact_if_worthwhile(false);
  profile.mark(stream, "compact");
  block_layers += taken;
  return taken;
}

template <int W, Coefficient C>
LayerPassResult DeviceSum<W, C>::Impl::finalize_layer(const Truncation& truncation) {
  LayerPassResult result;
  const auto steps = truncation.layer_pass_steps();
  if (steps.empty()) return result;
  activate();
  if (truncation.contains(Truncation::Kind::collapse_sample)) {
    // The draw walks the terms in key order: done on the host, then the sum goes back up.
    PauliSum<W, C> host = download(host_threads);
    result = truncation.finalize_layer(host);
    upload(host);
    tested.forget();
    return result;
  }
  discarded = 0.0;
  for (const auto& step : steps) {
    const std::size_t live = stored - holes;
    if (live <= step.count) continue;
    zero_counters();
    if (step.kind == Truncation::Kind::approx_topn) {
      approx_topn_cut(step.count);
    } else {
      topn_cut(step.count);
    }
    settle_counters();
  }
  result.discarded_weight = discarded;
  compact_if_worthwhile(false);
  return result;
}

template <int W, Coefficient C>
void DeviceSum<W, C>::Impl::approx_topn_cut(std::size_t n) {
  Launch::exponent_histogram(coef.ptr, stored, histogram(), stream);
  fetch_histogram(2048);
  std::size_t running = 0;
  int lowest = 2048;  // the same walk as approx_topn_lowest_bin on the CPU
  for (int bin = 2047; bin >= 0; --bin) {
    running += host_scratch[bin];
    if (running > n) break;
    lowest = bin;
  }
  Launch::cut(coef.ptr, stored, 0, lowest, 0.0, static_cast<kernels::LayerCounters*>(counters.ptr),
              stream);
}

template <int W, Coefficient C>
void DeviceSum<W, C>::Impl::topn_cut(std::size_t n) {
  auto* counters_ptr = static_cast<kernels::LayerCounters*>(counters.ptr);
  if (n == 0) {
    Launch::cut(coef.ptr, stored, 3, 0, 0.0, counters_ptr, stream);
    return;
  }
  // Radix select of the n-th largest |c|² among live, non-NaN terms: 8-bit digits from the top.
  std::uint64_t prefix = 0, mask = 0;
  std::size_t rank = n, larger = 0, equal = 0;
  for (int shift = 56; shift >= 0; shift -= 8) {
    Launch::digit_histogram(coef.ptr, stored, prefix, mask, shift, histogram(), stream);
    fetch_histogram(256);
    if (shift == 56) {
      std::size_t candidates = 0;
      for (int d = 0; d < 256; ++d) candidates += host_scratch[d];
      if (candidates <= n) {  // every non-NaN term fits: keep them all (NaNs go)
        Launch::cut(coef.ptr, stored, 1, 0, -std::numeric_limits<double>::infinity(), counters_ptr,
                    stream);
        return;
      }
    }
    int digit = 255;
    for (; digit > 0; --digit) {
      if (host_scratch[digit] >= rank) break;
      rank -= host_scratch[digit];
      larger += host_scratch[digit];
    }
    equal = host_scratch[digit];
    prefix |= static_cast<std::uint64_t>(digit) << shift;
    mask |= std::uint64_t{0xff} << shift;
  }
  const double value = std::bit_cast<double>(prefix);
  // The tie group at the pivot is kept whole when it fits, otherwise dropped whole.
  const bool keep_ties = larger + equal <= n;
  Launch::cut(coef.ptr, stored, keep_ties ? 1 : 2, 0, value, counters_ptr, stream);
}

template <int W, Coefficient C>
double DeviceSum<W, C>::Impl::apply_term_truncation(const Truncation& truncation) {
  activate();
  discarded = 0.0;
  if (truncation.has_term_test()) {
    zero_counters();
    Launch::term_test(args(truncation), stream);
    settle_counters();
  }
  tested.remember(truncation);
  compact_if_worthwhile(false);
  profile.mark(stream, "term test");
  return discarded;
}

template <int W, Coefficient C>
double DeviceSum<W, C>::Impl::cut_now(int mode, int bin, double value) {
  activate();
  discarded = 0.0;
  zero_counters();
  Launch::cut(coef.ptr, stored, mode, bin, value, static_cast<kernels::LayerCounters*>(counters.ptr), stream);
  settle_counters();
  compact_if_worthwhile(false);
  return discarded;
}

#define PAULISTRINGS_INSTANTIATE_IMPL_LAYERS(W, C)                                                           \
  template kernels::LayerArgs<W> DeviceSum<W, C>::Impl::args(const Truncation& truncation) const;            \
  template kernels::TermProgram DeviceSum<W, C>::Impl::program_of(const Truncation& truncation);             \
  template bool DeviceSum<W, C>::Impl::skips_layer(const PreparedChannel<W>& table,                          \
                                                   const Truncation& truncation) const;                      \
  template void DeviceSum<W, C>::Impl::add_support(const PreparedChannel<W>& table);                         \
  template kernels::LocalTable DeviceSum<W, C>::Impl::local_table(const PreparedChannel<W>& table);          \
  template kernels::RotationTable<W> DeviceSum<W, C>::Impl::rotation_table(const PreparedChannel<W>& table); \
  template void DeviceSum<W, C>::Impl::rotation_layer(const PreparedChannel<W>& table,                       \
                                                      const Truncation& truncation);                         \
  template void DeviceSum<W, C>::Impl::local_join_layer(const PreparedChannel<W>& table,                     \
                                                        const Truncation& truncation);                       \
  template void DeviceSum<W, C>::Impl::rescale_outside_join(                                                 \
      const kernels::LayerArgs<W>& a, const kernels::LocalTable& t, const Truncation& truncation);           \
  template double DeviceSum<W, C>::Impl::apply_layer(const PreparedChannel<W>& table,                        \
                                                     const Truncation& truncation);                          \
  template std::size_t DeviceSum<W, C>::Impl::apply_block(                                                   \
      std::span<const PreparedChannel<W>> tables, const Truncation& truncation, std::span<BlockLayer> out);  \
  template kernels::RotationBlock<W> DeviceSum<W, C>::Impl::block_table(                                     \
      std::span<const PreparedChannel<W>> tables, std::size_t limit);                                        \
  template LayerPassResult DeviceSum<W, C>::Impl::finalize_layer(const Truncation& truncation);              \
  template void DeviceSum<W, C>::Impl::approx_topn_cut(std::size_t n);                                       \
  template void DeviceSum<W, C>::Impl::topn_cut(std::size_t n);                                              \
  template double DeviceSum<W, C>::Impl::apply_term_truncation(const Truncation& truncation);                \
  template double DeviceSum<W, C>::Impl::cut_now(int mode, int bin, double value);
PAULISTRINGS_FOR_EACH_SUM_TYPE(PAULISTRINGS_INSTANTIATE_IMPL_LAYERS)
#undef PAULISTRINGS_INSTANTIATE_IMPL_LAYERS

}  // namespace paulistrings::gpu
