// Non-template read-out helpers.

#include "paulistrings/readout/observables.h"

#include <limits>

namespace paulistrings {

char parse_axis(std::string_view axis) {
  if (axis == "x" || axis == "X") return 'x';
  if (axis == "z" || axis == "Z") return 'z';
  throw std::invalid_argument("axis must be \"x\" or \"z\", got \"" + std::string(axis) + "\"");
}

double diagonal_echo(std::span<const double> histogram, double delta) {
  const double c = std::cos(2.0 * delta);
  double numerator = 0.0, denominator = 0.0, power = 1.0;
  for (double w : histogram) {
    numerator += w * power;
    denominator += w;
    power *= c;
  }
  if (denominator == 0.0) return std::numeric_limits<double>::quiet_NaN();
  return numerator / denominator;
}

}  // namespace paulistrings
