// The CPU engine's instances: CpuEngine<W, C> and run_layers over it, one per width and coefficient type
// the library compiles. cpu_engine.h declares them extern, so no other unit compiles them again.

#include "paulistrings/cpu/cpu_engine.h"

namespace paulistrings {

#define PAULISTRINGS_DEFINE_CPU_ENGINE(W, C)                                                 \
  template class CpuEngine<W, C>;                                                            \
  template PropagationStats run_layers<W, CpuEngine<W, C>>(CpuEngine<W, C>&, const Circuit&, \
                                                           const PropagateOptions&);
PAULISTRINGS_FOR_EACH_SUM_TYPE(PAULISTRINGS_DEFINE_CPU_ENGINE)
#undef PAULISTRINGS_DEFINE_CPU_ENGINE

}  // namespace paulistrings
