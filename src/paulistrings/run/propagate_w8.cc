// propagate()'s compiled instances of width 8 (real and complex coefficients): propagate.inl.

#include "paulistrings/run/propagate.inl"

namespace paulistrings {
PAULISTRINGS_INSTANTIATE_PROPAGATE_WIDTH(8)
}  // namespace paulistrings
