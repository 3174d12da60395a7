// Whether this test binary runs under AddressSanitizer (the sanitizer half of scripts/test.sh, preset
// debug-asan). A few slow cases repeat one check over many inputs; under the sanitizers they take a
// subset of those inputs (their first seeds, every header byte and every seventh body byte), the Release
// run all of them — the same check, fewer repetitions (CMakeLists.txt's CASE_LIMITS do the same for the
// seeded engine-equivalence sweeps).
#pragma once

namespace paulistrings::testing {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kUnderSanitizers = true;
#else
inline constexpr bool kUnderSanitizers = false;
#endif

}  // namespace paulistrings::testing
