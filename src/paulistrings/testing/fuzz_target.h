#pragma once
// Fuzz targets (scripts/fuzz.sh; testing/README.md). A target is one x.fuzz.cc beside the reader it
// fuzzes, holding an entry `void entry(std::string_view input)` that hands the input to the reader's public
// functions and returns normally when the reader accepts it or throws one of its documented exceptions;
// anything else — another exception, a crash, a leak, undefined behaviour, a hang — is a finding.
// PAULISTRINGS_FUZZ_TARGET(name, entry) compiles the entry two ways:
//  - in the libFuzzer build (CMake option PAULISTRINGS_FUZZ, clang; PAULISTRINGS_LIBFUZZER defined) it
//    defines LLVMFuzzerTestOneInput, where an escaping exception aborts and libFuzzer reports the input;
//  - in the ordinary test build it registers the entry under `name`, and testing/fuzz_corpus.test.cc
//    replays every file of tests/fuzz/<name>/ through it, so the seeds and every fixed finding stay
//    checked by g++ and the sanitizer CI run without clang.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace paulistrings::testing {

using FuzzEntry = void (*)(std::string_view input);

/// The registered targets by name (the test build only).
inline std::map<std::string, FuzzEntry>& fuzz_targets() {
  static std::map<std::string, FuzzEntry> targets;
  return targets;
}

inline bool register_fuzz_target(const char* name, FuzzEntry entry) {
  fuzz_targets()[name] = entry;
  return true;
}

}  // namespace paulistrings::testing

#ifdef PAULISTRINGS_LIBFUZZER
#define PAULISTRINGS_FUZZ_TARGET(name, entry)                                         \
  extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) { \
    entry(std::string_view(reinterpret_cast<const char*>(data), size));               \
    return 0;                                                                         \
  }
#else
#define PAULISTRINGS_FUZZ_TARGET(name, entry)                          \
  [[maybe_unused]] static const bool paulistrings_fuzz_target_##name = \
      ::paulistrings::testing::register_fuzz_target(#name, entry);
#endif
