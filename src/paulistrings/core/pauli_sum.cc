// PauliSum's members for every sum type the library compiles, instantiated once here; pauli_sum.h
// declares them extern, so the other units call these instead of compiling their own.

#include "paulistrings/core/pauli_sum.h"

namespace paulistrings {

#define PAULISTRINGS_INSTANTIATE_PAULI_SUM(W, C) template class PauliSum<W, C>;
PAULISTRINGS_FOR_EACH_SUM_TYPE(PAULISTRINGS_INSTANTIATE_PAULI_SUM)
#undef PAULISTRINGS_INSTANTIATE_PAULI_SUM

}  // namespace paulistrings
