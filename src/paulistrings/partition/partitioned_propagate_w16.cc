// propagate_partitioned's compiled instances of width 16 (real and complex coefficients). One translation
// unit a width, so a parallel build compiles them side by side (all ten in one unit were the build's
// longest edge: docs/PERFORMANCE.md, "2026-12-02 — device build after splitting partitioned_propagate.cc").

#include "paulistrings/partition/partitioned_propagate.h"

namespace paulistrings {

template PartitionedPropagation propagate_partitioned<16, double>(PauliSum<16, double>&, const Circuit&,
                                                                 const PropagateOptions&, const PartitionOptions&);
template PartitionedPropagation propagate_partitioned<16, Complex>(PauliSum<16, Complex>&, const Circuit&,
                                                                  const PropagateOptions&, const PartitionOptions&);

}  // namespace paulistrings
