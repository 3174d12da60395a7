// propagate()'s compiled instances of width 4 (real and complex coefficients): propagate.inl.

#include "paulistrings/run/propagate.inl"

namespace paulistrings {
PAULISTRINGS_INSTANTIATE_PROPAGATE_WIDTH(4)
}  // namespace paulistrings
