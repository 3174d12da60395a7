// narrowable(): see narrow_engine.h.

#include "paulistrings/cpu/narrow_engine.h"

namespace paulistrings {

bool narrowable(const PropagateOptions& options) {
  using Kind = Truncation::Kind;
  const Truncation& truncation = options.truncation;
  return options.max_terms == 0 && !truncation.contains(Kind::topn) &&
         !truncation.contains(Kind::approx_topn) && !truncation.contains(Kind::collapse_sample) &&
         options.general_layer == GeneralLayer::orbit && options.in_place_rotations;
}

}  // namespace paulistrings
