// Fuzz target "qasm" (testing/fuzz_target.h): OpenQASM 2 text through read_qasm. Documented: io::ParseError
// (file:line:column) for any bad program.
#include <string_view>

#include "paulistrings/io/parse_error.h"
#include "paulistrings/io/qasm.h"
#include "paulistrings/testing/fuzz_target.h"

namespace paulistrings::io {
namespace {

void fuzz_qasm(std::string_view input) {
  try {
    read_qasm(input, "fuzz.qasm");
  } catch (const ParseError&) {
  }
}

}  // namespace
}  // namespace paulistrings::io

PAULISTRINGS_FUZZ_TARGET(qasm, paulistrings::io::fuzz_qasm)
