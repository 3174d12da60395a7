// Fuzz target "task" (testing/fuzz_target.h): task JSON through parse_task. Documented: io::ParseError for
// any bad input. A task the reader accepts must also give its observables as sums (what every front end
// does next) and write back as JSON that reads as the same task (task.h: parse_task(task_to_json(t))
// reproduces t; task_to_json refuses only what the schema cannot spell, std::invalid_argument).
#include <stdexcept>
#include <string>
#include <string_view>

#include "paulistrings/io/observable_spec.h"
#include "paulistrings/io/parse_error.h"
#include "paulistrings/io/task.h"
#include "paulistrings/testing/fuzz_target.h"

namespace paulistrings::io {
namespace {

// "stim_file" paths resolve here: a directory that does not exist, so a fuzzed task reads no file.
constexpr const char* kNoDirectory = "/nonexistent/paulistrings-fuzz";

void fuzz_task(std::string_view input) {
  Task task;
  try {
    task = parse_task(input, "fuzz.json", kNoDirectory);
  } catch (const ParseError&) {
    return;
  }
  for (const NamedObservable& observable : task.observables)
    make_observable(observable.terms, task.num_qubits);
  std::string written;
  try {
    written = task_to_json(task);
  } catch (const std::invalid_argument&) {
    return;  // a circuit the schema cannot spell
  }
  if (task_to_json(parse_task(written, "rewritten.json", kNoDirectory)) != written)
    throw std::logic_error("task_to_json does not read back as the same task:\n" + written);
}

}  // namespace
}  // namespace paulistrings::io

PAULISTRINGS_FUZZ_TARGET(task, paulistrings::io::fuzz_task)
