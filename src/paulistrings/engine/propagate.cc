// The compiled instances of propagate() and its runtime-width front.

#include "paulistrings/engine/propagate.h"

namespace paulistrings {

#define PAULISTRINGS_INSTANTIATE_PROPAGATE(W, C) \
  template PropagationStats propagate<W, C>(PauliSum<W, C>&, const Circuit&, const PropagateOptions&);
PAULISTRINGS_FOR_EACH_SUM_TYPE(PAULISTRINGS_INSTANTIATE_PROPAGATE)
#undef PAULISTRINGS_INSTANTIATE_PROPAGATE

PropagationStats propagate(AnyPauliSum& sum, const Circuit& circuit, const PropagateOptions& options) {
  for (const Channel& channel : circuit) {
    if (channel.has_complex_transfer()) {
      sum.make_complex();
      break;
    }
  }
  return sum.visit([&](auto& typed) { return propagate(typed, circuit, options); });
}

}  // namespace paulistrings
