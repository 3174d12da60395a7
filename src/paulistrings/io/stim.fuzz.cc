// Fuzz target "stim" (testing/fuzz_target.h): stim circuit text through read_stim. Documented: io::ParseError
// (file:line:column) for any bad program. The observable of a program the reader accepts must become a sum
// on the circuit's qubits, as the command line makes it next.
#include <string_view>

#include "paulistrings/io/observable_spec.h"
#include "paulistrings/io/parse_error.h"
#include "paulistrings/io/stim.h"
#include "paulistrings/testing/fuzz_target.h"

namespace paulistrings::io {
namespace {

void fuzz_stim(std::string_view input) {
  StimProgram program;
  try {
    program = read_stim(input, "fuzz.stim");
  } catch (const ParseError&) {
    return;
  }
  if (!program.observable.empty()) make_observable(program.observable, program.circuit.num_qubits());
}

}  // namespace
}  // namespace paulistrings::io

PAULISTRINGS_FUZZ_TARGET(stim, paulistrings::io::fuzz_stim)
