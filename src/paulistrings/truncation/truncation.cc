// Truncation factories, combinators and the width-independent selection kernels.

#include "paulistrings/truncation/truncation.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>

#include "paulistrings/core/text.h"

namespace paulistrings {

Truncation::Truncation() : node_(std::make_shared<const Node>()) {}

Truncation Truncation::coeff(double epsilon) {
  if (std::isnan(epsilon)) throw std::invalid_argument("coeff: epsilon is NaN");
  Node node;
  node.kind = Kind::coeff;
  node.epsilon = epsilon;
  return Truncation(std::make_shared<const Node>(std::move(node)));
}

Truncation Truncation::weight(std::size_t max_weight) {
  Node node;
  node.kind = Kind::weight;
  node.count = max_weight;
  return Truncation(std::make_shared<const Node>(std::move(node)));
}

Truncation Truncation::topn(std::size_t n) {
  Node node;
  node.kind = Kind::topn;
  node.count = n;
  return Truncation(std::make_shared<const Node>(std::move(node)));
}

Truncation Truncation::approx_topn(std::size_t n) {
  Node node;
  node.kind = Kind::approx_topn;
  node.count = n;
  return Truncation(std::make_shared<const Node>(std::move(node)));
}

Truncation Truncation::collapse_sample(std::size_t cache, std::uint64_t seed) {
  Node node;
  node.kind = Kind::collapse_sample;
  node.count = cache;
  node.seed = seed;
  node.state = std::make_shared<CollapseState>();
  return Truncation(std::make_shared<const Node>(std::move(node)));
}

Truncation operator&(const Truncation& a, const Truncation& b) {
  Truncation::Node node;
  node.kind = Truncation::Kind::all_of;
  node.left = a.node_;
  node.right = b.node_;
  return Truncation(std::make_shared<const Truncation::Node>(std::move(node)));
}

Truncation operator|(const Truncation& a, const Truncation& b) {
  Truncation::Node node;
  node.kind = Truncation::Kind::any_of;
  node.left = a.node_;
  node.right = b.node_;
  return Truncation(std::make_shared<const Truncation::Node>(std::move(node)));
}

namespace {

template <class Node, class Predicate>
bool any_node(const Node& node, Predicate&& predicate) {
  if (predicate(node)) return true;
  return (node.left && any_node(*node.left, predicate)) || (node.right && any_node(*node.right, predicate));
}

}  // namespace

bool Truncation::has_term_test() const {
  // Under `|` a term test only matters when every branch can drop; the conservative answer is fine.
  return any_node(*node_, [](const Node& n) { return n.kind == Kind::coeff || n.kind == Kind::weight; });
}

bool Truncation::has_layer_pass() const {
  // `|` disables its children's passes, so only paths made of `&` nodes count.
  auto walk = [](auto&& self, const Node& n) -> bool {
    switch (n.kind) {
      case Kind::topn:
      case Kind::approx_topn:
      case Kind::collapse_sample:
        return true;
      case Kind::all_of:
        return self(self, *n.left) || self(self, *n.right);
      default:
        return false;
    }
  };
  return walk(walk, *node_);
}

bool Truncation::contains(Kind kind) const {
  return any_node(*node_, [kind](const Node& n) { return n.kind == kind; });
}

std::vector<Truncation::TermTestStep> Truncation::term_test_program() const {
  std::vector<TermTestStep> program;
  auto walk = [&program](auto&& self, const Node& n) -> void {
    TermTestStep step;
    switch (n.kind) {
      case Kind::coeff:
        step.op = TermTestStep::Op::coeff;
        step.epsilon = n.epsilon;
        break;
      case Kind::weight:
        step.op = TermTestStep::Op::weight;
        step.max_weight = n.count;
        break;
      case Kind::all_of:
      case Kind::any_of:
        self(self, *n.left);
        self(self, *n.right);
        step.op = n.kind == Kind::all_of ? TermTestStep::Op::all_of : TermTestStep::Op::any_of;
        break;
      default:
        step.op = TermTestStep::Op::keep_all;
    }
    program.push_back(step);
  };
  walk(walk, *node_);
  return program;
}

std::vector<Truncation::LayerPassStep> Truncation::layer_pass_steps() const {
  std::vector<LayerPassStep> steps;
  auto walk = [&steps](auto&& self, const Node& n) -> void {
    switch (n.kind) {
      case Kind::topn:
      case Kind::approx_topn:
      case Kind::collapse_sample:
        steps.push_back({n.kind, n.count});
        return;
      case Kind::all_of:
        self(self, *n.left);
        self(self, *n.right);
        return;
      default:
        return;
    }
  };
  walk(walk, *node_);
  return steps;
}

std::string Truncation::description() const {
  // No iostreams: the text feeds the partition shape check's fingerprint (same bytes on every rank,
  // whatever its locale) and is built on partition threads (core/text.h).
  auto walk = [](auto&& self, const Node& n) -> std::string {
    switch (n.kind) {
      case Kind::none:
        return "none";
      case Kind::coeff:
        return "coeff(" + format_double(n.epsilon) + ")";
      case Kind::weight:
        return "weight(" + std::to_string(n.count) + ")";
      case Kind::topn:
        return "topn(" + std::to_string(n.count) + ")";
      case Kind::approx_topn:
        return "approx_topn(" + std::to_string(n.count) + ")";
      case Kind::collapse_sample:
        return "collapse_sample(" + std::to_string(n.count) + ", " + std::to_string(n.seed) + ")";
      case Kind::all_of:
      case Kind::any_of: {
        // Appended piece by piece ("(" + std::string&& trips GCC 12's -Wrestrict false positive).
        std::string text = "(";
        text += self(self, *n.left);
        text += n.kind == Kind::all_of ? " & " : " | ";
        text += self(self, *n.right);
        text += ')';
        return text;
      }
    }
    return "?";
  };
  return walk(walk, *node_);
}

// ---------------------------------------------------------------- topn / approx_topn cuts
//
// Both cuts read the magnitudes through their IEEE-754 bit patterns: for +0, subnormals, normals and
// +∞ the unsigned 64-bit pattern orders exactly like the value. Counting passes split the input into
// blocks with one histogram each (merged by adding counts), and the flag pass sums the dropped
// magnitudes over fixed chunks, so no result depends on the thread count or the schedule.

namespace {

constexpr std::size_t kParallelMinimum = std::size_t{1} << 15;  // smaller inputs stay serial
constexpr std::size_t kRadixMinimum = std::size_t{1} << 14;     // smaller topn inputs: nth_element
constexpr std::size_t kBins = 2048;                             // 11-bit digits
constexpr std::size_t kRejected = kBins;                        // slot of the keys a pass filters out
constexpr std::size_t kSlots = kBins + 1;
constexpr std::size_t kMaxBlock = std::size_t{1} << 30;  // keeps 32-bit counters exact
constexpr int kDigitBits = 11;
// A key no radix filter accepts: every prefix is below 2^(63 − high), ~0 >> high is not.
constexpr std::uint64_t kNeverMatches = ~std::uint64_t{0};

int team_size(int threads, std::size_t count) {
  return threads > 1 && count >= kParallelMinimum ? threads : 1;
}

/// body(i) for i in [0, count): on `team` OpenMP threads, or without entering OpenMP when team is 1.
template <class Body>
void for_each_index(std::size_t count, int team, const Body& body) {
  if (team <= 1) {
    for (std::size_t i = 0; i < count; ++i) body(i);
    return;
  }
#pragma omp parallel for num_threads(team) schedule(dynamic, 1)
  for (std::size_t i = 0; i < count; ++i) body(i);
}

std::uint64_t bits_of(double value) { return std::bit_cast<std::uint64_t>(value); }
std::uint64_t bits_of(std::uint64_t bits) { return bits; }

/// Counting passes split their input into blocks, one histogram each; counts add, so the totals and
/// the per-block counts do not depend on the threads or the schedule.
struct Blocks {
  std::size_t count;   // items
  std::size_t blocks;  // near-equal blocks, each below kMaxBlock items
  int team;            // OpenMP threads

  Blocks(std::size_t count, int threads) : count(count), team(team_size(threads, count)) {
    blocks = std::max<std::size_t>(team > 1 ? 4 * static_cast<std::size_t>(team) : 1, count / kMaxBlock + 1);
  }
  std::size_t begin(std::size_t b) const { return b * (count / blocks) + std::min(b, count % blocks); }
};

/// Histograms of one counting pass: per block two interleaved 32-bit histograms (even and odd items,
/// so runs of equal keys do not serialize on one counter), their totals, and for the radix passes the
/// smallest and largest key not rejected.
struct Counts {
  std::vector<std::uint32_t> per_block;  // block b: [2b·kSlots, (2b + 2)·kSlots)
  std::array<std::size_t, kSlots> totals{};
  std::uint64_t lowest = ~std::uint64_t{0};
  std::uint64_t highest = 0;

  std::size_t in_block(std::size_t b, std::size_t slot) const {
    return std::size_t{per_block[2 * b * kSlots + slot]} + per_block[(2 * b + 1) * kSlots + slot];
  }
};

/// Counts slot_of(key) over the values (slot kRejected for keys the pass filters out). With kRange,
/// also the range of the accepted keys.
template <bool kRange, class T, class SlotOf>
Counts count_slots(std::span<const T> values, const Blocks& blocks, SlotOf slot_of) {
  Counts counts;
  counts.per_block.assign(2 * blocks.blocks * kSlots, 0);
  std::vector<std::uint64_t> lowest(blocks.blocks, ~std::uint64_t{0}), highest(blocks.blocks, 0);
  for_each_index(blocks.blocks, blocks.team, [&](std::size_t b) {
    const SlotOf slot_in_block = slot_of;  // a local copy the counter stores cannot alias
    std::uint32_t* even = counts.per_block.data() + 2 * b * kSlots;
    std::uint32_t* odd = even + kSlots;
    std::uint64_t low = ~std::uint64_t{0}, high = 0;
    const auto count_one = [&](std::uint32_t* histogram, std::uint64_t bits) {
      const std::size_t slot = slot_in_block(bits);
      ++histogram[slot];
      if constexpr (kRange) {  // masks rather than branches: acceptance is random on random data
        const std::uint64_t accepted = std::uint64_t{0} - static_cast<std::uint64_t>(slot != kRejected);
        low = std::min(low, bits | ~accepted);
        high = std::max(high, bits & accepted);
      }
    };
    const std::size_t end = blocks.begin(b + 1);
    std::size_t i = blocks.begin(b);
    for (; i + 2 <= end; i += 2) {
      count_one(even, bits_of(values[i]));
      count_one(odd, bits_of(values[i + 1]));
    }
    if (i < end) count_one(even, bits_of(values[i]));
    lowest[b] = low;
    highest[b] = high;
  });
  for (std::size_t b = 0; b < blocks.blocks; ++b) {
    for (std::size_t slot = 0; slot < kSlots; ++slot) counts.totals[slot] += counts.in_block(b, slot);
    counts.lowest = std::min(counts.lowest, lowest[b]);
    counts.highest = std::max(counts.highest, highest[b]);
  }
  return counts;
}

/// Keys gathered for the next radix levels; kNeverMatches fills the gaps (one slot per block).
struct Candidates {
  std::unique_ptr<std::uint64_t[]> keys;
  std::size_t size = 0;
  std::span<const std::uint64_t> view() const { return {keys.get(), size}; }
};

/// The keys whose bits from `high` up equal `prefix`, block by block in input order; `in_block(b)` is
/// how many block b holds (from the counting pass over the same blocks).
template <class T, class InBlock>
Candidates gather(std::span<const T> values, const Blocks& blocks, InBlock in_block, int high,
                  std::uint64_t prefix) {
  // Block b writes from offsets[b] + b: its last slot absorbs the unconditional store after its last
  // match and then holds kNeverMatches.
  std::vector<std::size_t> offsets(blocks.blocks + 1, 0);
  for (std::size_t b = 0; b < blocks.blocks; ++b) offsets[b + 1] = offsets[b] + in_block(b) + 1;
  Candidates out;
  out.size = offsets[blocks.blocks];
  out.keys = std::make_unique_for_overwrite<std::uint64_t[]>(out.size);
  std::uint64_t* keys = out.keys.get();
  for_each_index(blocks.blocks, blocks.team, [&](std::size_t b) {
    std::uint64_t* next = keys + offsets[b];
    const std::size_t end = blocks.begin(b + 1);
    for (std::size_t i = blocks.begin(b); i < end; ++i) {
      const std::uint64_t bits = bits_of(values[i]);
      *next = bits;
      next += (bits >> high) == prefix;
    }
    *next = kNeverMatches;
  });
  return out;
}

/// topn's cut point: keep v > value, and v == value too when keep_ties.
struct TopnPivot {
  double value;
  bool keep_ties;
};

/// The pivot for 1 ≤ n < m by radix select on the bit patterns: 11-bit digits from the top (the first
/// is the exponent), each chosen from a histogram of the keys matching the bits fixed so far. Each
/// pass also finds the range of those keys: bits its ends share are fixed without a pass, and a range
/// of one key is the pivot. The matching keys are gathered once they are at most a quarter of the
/// ones scanned. Returns nullopt when a value is negative, −0 or NaN (bit order is not value order).
std::optional<TopnPivot> radix_pivot(std::span<const double> values, std::size_t n, int threads) {
  std::size_t rank = n;      // the pivot is the rank-th largest of the keys matching `prefix`
  std::size_t larger = 0;    // keys known to be larger than the pivot
  std::uint64_t prefix = 0;  // the pivot's bits from `high` up (bit 63, the sign, is 0)
  int high = 63;
  Candidates candidates;
  bool gathered = false;
  for (bool first = true;; first = false) {
    const int shift = std::max(high - kDigitBits, 0);
    const std::uint64_t mask = (std::uint64_t{1} << (high - shift)) - 1;
    const auto slot_of = [high, shift, prefix, mask](std::uint64_t bits) -> std::size_t {
      // (bits >> high) == prefix ? digit : kRejected, without a branch on random data.
      const std::size_t accepted = std::size_t{0} - static_cast<std::size_t>((bits >> high) == prefix);
      return kRejected ^ ((static_cast<std::size_t>((bits >> shift) & mask) ^ kRejected) & accepted);
    };
    const std::span<const std::uint64_t> keys = candidates.view();
    const Blocks blocks(gathered ? keys.size() : values.size(), threads);
    const Counts counts =
        gathered ? count_slots<true>(keys, blocks, slot_of) : count_slots<true>(values, blocks, slot_of);
    if (first) {
      // A set sign bit (negative, −0, negative NaN) is rejected; positive NaN shares bin 2047 with +∞.
      if (counts.totals[kRejected] != 0) return std::nullopt;
      if (counts.totals[kBins - 1] != 0 &&
          std::any_of(values.begin(), values.end(), [](double v) { return std::isnan(v); })) {
        return std::nullopt;
      }
    }
    if (counts.lowest == counts.highest) {
      // One distinct key left: the pivot, and every matching key ties with it.
      const std::size_t ties = blocks.count - counts.totals[kRejected];
      return TopnPivot{std::bit_cast<double>(counts.lowest), larger + ties <= n};
    }
    std::size_t digit = static_cast<std::size_t>(mask);
    while (rank > counts.totals[digit]) {  // the digits' counts add up to at least rank
      rank -= counts.totals[digit];
      larger += counts.totals[digit];
      --digit;
    }
    prefix = (prefix << (high - shift)) | digit;
    high = shift;
    // Every matching key lies between lowest and highest, so it has the bits they share.
    const int shared_from = 64 - std::countl_zero(counts.lowest ^ counts.highest);
    if (shared_from < high) {
      prefix = counts.lowest >> shared_from;
      high = shared_from;
    }
    const std::size_t matching = counts.totals[digit];
    if (high == 0) return TopnPivot{std::bit_cast<double>(prefix), larger + matching <= n};
    if (matching <= blocks.count / 4) {
      const auto in_block = [&counts, digit](std::size_t b) { return counts.in_block(b, digit); };
      candidates = gathered ? gather(keys, blocks, in_block, high, prefix)
                            : gather(values, blocks, in_block, high, prefix);
      gathered = true;
    }
  }
}

/// The pivot by comparisons (1 ≤ n < m): for small inputs, where a copy and nth_element beat the
/// radix passes' fixed costs, and for inputs with negative, −0 or NaN magnitudes (never |c|² of a
/// finite coefficient). NaNs are left out; the n-th largest of the rest is the same value the radix
/// select finds.
TopnPivot comparison_pivot(std::span<const double> values, std::size_t n) {
  std::vector<double> ordered;
  ordered.reserve(values.size());
  for (double v : values) {
    if (!std::isnan(v)) ordered.push_back(v);
  }
  if (ordered.size() <= n) return TopnPivot{-std::numeric_limits<double>::infinity(), true};
  std::nth_element(ordered.begin(), ordered.begin() + static_cast<std::ptrdiff_t>(n - 1), ordered.end(),
                   std::greater<double>());
  const double pivot = ordered[n - 1];
  std::size_t at_least = 0;
  for (double v : ordered) at_least += v >= pivot;
  return TopnPivot{pivot, at_least <= n};
}

/// Writes keep[i] = keeps(v_i) and sums the dropped v_i: within each kDiscardedSumChunk chunk over four
/// lanes (i mod 4, added as (l0 + l1) + (l2 + l3)), then the chunk sums in order. Adding +0.0 for a
/// kept term leaves a lane's bits unchanged (a lane starting at +0.0 is never −0.0).
template <class Keeps>
LayerCut mark(std::span<const double> values, std::span<char> keep, int threads, Keeps keeps) {
  const std::size_t m = values.size();
  if (keep.size() != m) {
    std::string message("layer cut: expected one keep flag per magnitude, got ");
    message.append(std::to_string(keep.size())).append(" flags for ").append(std::to_string(m));
    throw std::invalid_argument(message.append(" magnitudes"));
  }
  const std::size_t chunks = (m + kDiscardedSumChunk - 1) / kDiscardedSumChunk;
  std::vector<double> dropped(chunks, 0.0);
  std::vector<std::size_t> kept(chunks, 0);
  for_each_index(chunks, team_size(threads, m), [&](std::size_t c) {
    const std::size_t begin = c * kDiscardedSumChunk;
    const std::size_t end = std::min(m, begin + kDiscardedSumChunk);
    double lanes[4] = {0.0, 0.0, 0.0, 0.0};
    std::size_t count = 0;
    std::size_t i = begin;
    // A kept term adds +0.0 (its bits masked off), so the loop has no data-dependent branch.
    const auto step = [&](std::size_t index, double& lane) {
      const double v = values[index];
      const bool flag = keeps(v);
      keep[index] = flag;
      const std::uint64_t dropped = std::uint64_t{0} - static_cast<std::uint64_t>(!flag);
      lane += std::bit_cast<double>(std::bit_cast<std::uint64_t>(v) & dropped);
      count += flag;
    };
    for (; i + 4 <= end; i += 4) {
      for (std::size_t lane = 0; lane < 4; ++lane) step(i + lane, lanes[lane]);
    }
    for (; i < end; ++i) step(i, lanes[(i - begin) % 4]);
    dropped[c] = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
    kept[c] = count;
  });
  LayerCut cut;
  for (std::size_t c = 0; c < chunks; ++c) {
    cut.kept += kept[c];
    cut.discarded_weight += dropped[c];
  }
  return cut;
}

}  // namespace

LayerCut topn_cut(std::span<const double> magnitudes_squared, std::size_t n, std::span<char> keep,
                  int threads) {
  const std::size_t m = magnitudes_squared.size();
  if (m <= n) return mark(magnitudes_squared, keep, threads, [](double) { return true; });
  if (n == 0) return mark(magnitudes_squared, keep, threads, [](double) { return false; });
  const std::optional<TopnPivot> radix =
      m >= kRadixMinimum ? radix_pivot(magnitudes_squared, n, threads) : std::nullopt;
  const TopnPivot pivot = radix ? *radix : comparison_pivot(magnitudes_squared, n);
  const double value = pivot.value;
  // The tie group at the pivot is kept whole when it fits, otherwise dropped whole.
  if (pivot.keep_ties) {
    return mark(magnitudes_squared, keep, threads, [value](double v) { return v >= value; });
  }
  return mark(magnitudes_squared, keep, threads, [value](double v) { return v > value; });
}

std::size_t select_topn(std::span<const double> magnitudes_squared, std::size_t n, std::vector<char>& keep,
                        int threads) {
  keep.resize(magnitudes_squared.size());  // every flag is overwritten
  return topn_cut(magnitudes_squared, n, keep, threads).kept;
}

int approx_topn_lowest_bin(std::span<const double> magnitudes_squared, std::size_t n, int threads) {
  const Counts counts = count_slots<false>(magnitudes_squared, Blocks(magnitudes_squared.size(), threads),
                                           [](std::uint64_t bits) { return (bits >> 52) & 0x7ff; });
  const std::array<std::size_t, kSlots>& histogram = counts.totals;
  std::size_t running = 0;
  int lowest = 2048;  // nothing kept yet
  for (int bin = 2047; bin >= 0; --bin) {
    running += histogram[static_cast<std::size_t>(bin)];
    if (running > n) break;
    lowest = bin;
  }
  return lowest;
}

LayerCut approx_topn_cut(std::span<const double> magnitudes_squared, std::size_t n, std::span<char> keep,
                         int threads) {
  const int lowest = approx_topn_lowest_bin(magnitudes_squared, n, threads);
  return mark(magnitudes_squared, keep, threads, [lowest](double v) { return exponent_bin(v) >= lowest; });
}

std::size_t collapse_pick(std::span<const double> magnitudes_squared, std::uint64_t seed,
                          std::uint64_t pass) {
  double total = 0.0;
  for (double v : magnitudes_squared) total += v;
  if (!(total > 0.0) || !std::isfinite(total)) {
    throw std::runtime_error("collapse_sample: the sum's total weight Σ|c|² is zero or not finite");
  }
  const std::uint64_t bits = splitmix64(seed ^ splitmix64(pass + 0x243f6a8885a308d3ULL));
  const double u = static_cast<double>(bits >> 11) * 0x1.0p-53;  // uniform in [0, 1)
  const double target = u * total;
  double running = 0.0;
  for (std::size_t i = 0; i < magnitudes_squared.size(); ++i) {
    running += magnitudes_squared[i];
    if (running > target) return i;
  }
  // Rounding can leave target ≥ running at the end: take the last term of nonzero weight.
  for (std::size_t i = magnitudes_squared.size(); i-- > 0;) {
    if (magnitudes_squared[i] > 0.0) return i;
  }
  return 0;
}

}  // namespace paulistrings
