#pragma once
// Parameter expressions of the OpenQASM reader (io/qasm_parser_expressions.cc parses them): the tree a gate
// definition keeps for each parameter expression, and the arithmetic that evaluates one operator, refusing a
// zero divisor and non-finite results.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace paulistrings::io::qasm_detail {

// clang-format off
enum class Op : std::uint8_t {
  constant, parameter, negate, add, subtract, multiply, divide, power,
  sin, cos, tan, exp, ln, sqrt, arcsin, arccos, arctan
};
// clang-format on

struct Expr {
  Op op = Op::constant;
  double value = 0.0;
  std::size_t parameter = 0;
  std::unique_ptr<Expr> a, b;
  std::size_t line = 0, column = 0;  ///< the operator's (or leaf's) token
  int depth = 1;
};
using ExprPtr = std::unique_ptr<Expr>;

struct FunctionName {
  std::string_view name;
  Op op;
  bool version3_only;
};
inline constexpr FunctionName kFunctions[] = {
    {"sin", Op::sin, false},      {"cos", Op::cos, false},      {"tan", Op::tan, false},
    {"exp", Op::exp, false},      {"ln", Op::ln, false},        {"sqrt", Op::sqrt, false},
    {"arcsin", Op::arcsin, true}, {"arccos", Op::arccos, true}, {"arctan", Op::arctan, true}};

/// How a message names the operator: "'+'", "unary '-'", "sin".
std::string_view op_name(Op op);

/// A message about '^' as OpenQASM 3 spells the power.
std::string spell_power(std::string message);

/// Applies one operator; on a zero divisor or a non-finite result returns false with `error` set.
bool compute(Op op, double a, double b, double& out, std::string& error);

}  // namespace paulistrings::io::qasm_detail
