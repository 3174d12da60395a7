// paulistrings-sum-bench [N]: PauliSum bucketing of N (default 5.5e6) random W = 8 terms, the size of
// the GPU engine's download of tfim_2d L = 18:
// the previous assign_terms (one indirect stable sort), the new assign_terms, assign_distinct_columns.
#include <chrono>
#include <cstdio>
#include <numeric>
#include <random>
#include <stdexcept>
#include "paulistrings/core/pauli_sum.h"
#include "paulistrings/core/text.h"
using namespace paulistrings;
using Sum = PauliSum<8, double>;
using Clock = std::chrono::steady_clock;
int main(int argc, char** argv) {
  std::size_t n = 5'500'000;
  try {  // strict numbers (core/text.h): "5.5e6" is 5,500,000; "1.5" or "-1" an error
    if (argc > 1) n = parse_count(argv[1]);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "N: %s\n", e.what());
    return 2;
  }
  std::mt19937_64 rng(7);
  std::vector<Sum::Term> terms(n);
  for (auto& t : terms) {
    for (int w = 0; w < 6; ++w) { t.key.x[w] = rng() & rng(); t.key.z[w] = rng() & rng() & rng(); }
    t.coefficient = 1.0 + (rng() % 1000);
  }
  const int bits = Sum::bits_to_fit(n, 1024, 128);
  BucketHash<8> hash;
  auto t0 = Clock::now();
  std::size_t old_size = 0;
  {  // the previous implementation, with its push_back growth
    std::vector<std::uint64_t> bucket(n);
    for (std::size_t i = 0; i < n; ++i) bucket[i] = hash(terms[i].key, bits);
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      if (bucket[a] != bucket[b]) return bucket[a] < bucket[b];
      return terms[a].key < terms[b].key;
    });
    std::vector<Sum::Key> keys; std::vector<double> c;
    for (std::size_t i = 0; i < n; ++i) { keys.push_back(terms[order[i]].key); c.push_back(terms[order[i]].coefficient); }
    old_size = keys.size();
  }
  auto t1 = Clock::now();
  Sum a(500);
  a.assign_terms(std::vector<Sum::Term>(terms), bits);
  auto t2 = Clock::now();
  Sum::KeyColumn keys(n);
  Sum::CoefficientColumn coef(n);
  for (std::size_t i = 0; i < n; ++i) { keys[i] = terms[i].key; coef[i] = terms[i].coefficient; }
  auto t3 = Clock::now();
  Sum b(500);
  b.assign_distinct_columns(std::move(keys), std::move(coef), bits);
  auto t4 = Clock::now();
  const bool same = a.keys().size() == b.keys().size() &&
                    std::equal(a.keys().begin(), a.keys().end(), b.keys().begin()) &&
                    std::equal(a.coefficients().begin(), a.coefficients().end(), b.coefficients().begin());
  auto s = [](auto x, auto y) { return std::chrono::duration<double>(y - x).count(); };
  std::printf("n=%zu bits=%d  old assign_terms %.3f s | new assign_terms (incl. copying the input) %.3f s | "
              "assign_distinct_columns %.3f s (columns built in %.3f s) | sizes %zu %zu %zu, same=%d\n",
              n, bits, s(t0, t1), s(t1, t2), s(t3, t4), s(t2, t3), old_size, a.size(), b.size(), same);
}
