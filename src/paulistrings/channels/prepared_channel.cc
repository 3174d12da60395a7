// Non-template helpers of the prepared channel tables.

#include "paulistrings/channels/prepared_channel.h"

namespace paulistrings {

std::string_view to_string(TableClass table_class) {
  switch (table_class) {
    case TableClass::key_preserving:
      return "key_preserving";
    case TableClass::permutation:
      return "permutation";
    default:
      return "general";
  }
}

}  // namespace paulistrings
