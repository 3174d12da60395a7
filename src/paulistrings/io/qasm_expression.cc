// Parameter expressions of the OpenQASM reader: see qasm_expression.h.
#include "paulistrings/io/qasm_expression.h"

#include <cmath>

#include "paulistrings/core/text.h"

namespace paulistrings::io::qasm_detail {

std::string_view op_name(Op op) {
  switch (op) {
    case Op::negate:
      return "unary '-'";
    case Op::add:
      return "'+'";
    case Op::subtract:
      return "'-'";
    case Op::multiply:
      return "'*'";
    case Op::divide:
      return "'/'";
    case Op::power:
      return "'^'";
    default:
      for (const FunctionName& f : kFunctions) {
        if (f.op == op) return f.name;
      }
      return "expression";
  }
}

std::string spell_power(std::string message) {
  if (message.starts_with("'^'")) message.replace(0, 3, "'**'");
  return message;
}

bool compute(Op op, double a, double b, double& out, std::string& error) {
  switch (op) {
    case Op::negate:
      out = -a;
      break;
    case Op::add:
      out = a + b;
      break;
    case Op::subtract:
      out = a - b;
      break;
    case Op::multiply:
      out = a * b;
      break;
    case Op::divide:
      if (b == 0.0) {
        error = "division by zero";
        return false;
      }
      out = a / b;
      break;
    case Op::power:
      out = std::pow(a, b);
      break;
    case Op::sin:
      out = std::sin(a);
      break;
    case Op::cos:
      out = std::cos(a);
      break;
    case Op::tan:
      out = std::tan(a);
      break;
    case Op::exp:
      out = std::exp(a);
      break;
    case Op::ln:
      out = std::log(a);
      break;
    case Op::sqrt:
      out = std::sqrt(a);
      break;
    case Op::arcsin:
      out = std::asin(a);
      break;
    case Op::arccos:
      out = std::acos(a);
      break;
    case Op::arctan:
      out = std::atan(a);
      break;
    default:
      out = a;
      break;
  }
  if (std::isfinite(out)) return true;
  error = std::string(op_name(op));
  error += " gives a non-finite value (";
  error += format_double(out);
  error += ") where a finite number is expected";
  return false;
}

}  // namespace paulistrings::io::qasm_detail
