// The OpenQASM parser's parameter expressions (qasm_parser.h declares the class): parameter lists and the
// recursive descent over + - * / powers, unary signs, functions, constants and gate parameters, into the
// trees of qasm_expression.h (folded to a constant where no gate parameter appears), with bounded nesting.

#include "paulistrings/io/qasm_parser.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <memory>
#include <numbers>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace paulistrings::io::qasm_detail {

class Parser::Nesting {
 public:
  Nesting(Parser& parser, const Token& at) : parser_(parser) {
    if (++parser_.nesting_ > kMaxExpressionNesting) {
      parser_.fail(at, "expression nested too deeply (more than " + std::to_string(kMaxExpressionNesting) +
                           " levels)");
    }
  }
  ~Nesting() { --parser_.nesting_; }
  Nesting(const Nesting&) = delete;
  Nesting& operator=(const Nesting&) = delete;

 private:
  Parser& parser_;
};

std::vector<ExprPtr> Parser::parse_parameter_list(const std::vector<std::string>* scope) {
  scope_ = scope;
  advance();  // '('
  std::vector<ExprPtr> list;
  if (is_symbol(")")) {
    advance();
    return list;
  }
  while (true) {
    list.push_back(parse_expression());
    if (is_symbol(",")) {
      advance();
      continue;
    }
    if (!is_symbol(")")) fail_expected("',' or ')' in the parameter list");
    advance();
    return list;
  }
}

ExprPtr Parser::constant(double value, const Token& at) const {
  auto e = std::make_unique<Expr>();
  e->value = value;
  e->line = at.line;
  e->column = at.column;
  return e;
}

ExprPtr Parser::combine(Op op, const Token& at, ExprPtr a, ExprPtr b) const {
  if (a->op == Op::constant && (!b || b->op == Op::constant)) {
    double out = 0.0;
    std::string error;
    if (!compute(op, a->value, b ? b->value : 0.0, out, error))
      fail(at, version_ == 3 ? spell_power(error) : error);
    return constant(out, at);
  }
  auto e = std::make_unique<Expr>();
  e->op = op;
  e->line = at.line;
  e->column = at.column;
  e->depth = 1 + std::max(a->depth, b ? b->depth : 0);
  if (e->depth > kMaxExpressionDepth) {
    fail(at, "expression too long (more than " + std::to_string(kMaxExpressionDepth) + " nested operations)");
  }
  e->a = std::move(a);
  e->b = std::move(b);
  return e;
}

ExprPtr Parser::parse_expression() {
  ExprPtr lhs = parse_term();
  while (is_symbol("+") || is_symbol("-")) {
    const Token op = tok_;
    advance();
    lhs = combine(op.text == "+" ? Op::add : Op::subtract, op, std::move(lhs), parse_term());
  }
  return lhs;
}

ExprPtr Parser::parse_term() {
  ExprPtr lhs = parse_unary();
  while (is_symbol("*") || is_symbol("/")) {
    const Token op = tok_;
    advance();
    lhs = combine(op.text == "*" ? Op::multiply : Op::divide, op, std::move(lhs), parse_unary());
  }
  return lhs;
}

ExprPtr Parser::parse_unary() {
  if (is_symbol("-") || is_symbol("+")) {
    const Token op = tok_;
    Nesting nesting(*this, op);
    advance();
    ExprPtr operand = parse_unary();
    return op.text == "-" ? combine(Op::negate, op, std::move(operand), nullptr) : std::move(operand);
  }
  return parse_power();
}

ExprPtr Parser::parse_power() {
  ExprPtr base = parse_primary();
  if (version_ == 3 && is_symbol("^"))
    fail(tok_, "'^' is a bitwise XOR in OpenQASM 3, not a power (use '**')");
  if (!is_symbol(version_ == 3 ? "**" : "^")) return base;
  const Token op = tok_;
  Nesting nesting(*this, op);
  advance();
  return combine(Op::power, op, std::move(base), parse_unary());
}

ExprPtr Parser::parse_primary() {
  const Token token = tok_;
  if (token.kind == TokenKind::integer || token.kind == TokenKind::real) {
    double value = 0.0;
    const auto [end, ec] = std::from_chars(token.text.data(), token.text.data() + token.text.size(), value);
    if (ec != std::errc() || end != token.text.data() + token.text.size() || !std::isfinite(value)) {
      fail(token, "number " + in_quotes(token.text) + " is out of the range of a double");
    }
    advance();
    return constant(value, token);
  }
  if (token.kind == TokenKind::identifier) {
    if (token.text == "pi" || (version_ == 3 && token.text == "π")) {
      advance();
      return constant(kPi, token);
    }
    if (version_ == 3 && (token.text == "tau" || token.text == "τ")) {
      advance();
      return constant(2 * kPi, token);
    }
    if (version_ == 3 && (token.text == "euler" || token.text == "ℇ")) {
      advance();
      return constant(std::numbers::e, token);
    }
    for (const FunctionName& f : kFunctions) {
      if (f.name != token.text || (f.version3_only && version_ != 3)) continue;
      Nesting nesting(*this, token);
      advance();
      expect_symbol("(", "after " + in_quotes(token.text));
      ExprPtr argument = parse_expression();
      expect_symbol(")", "to close the argument of " + in_quotes(token.text));
      return combine(f.op, token, std::move(argument), nullptr);
    }
    if (scope_) {
      for (std::size_t k = 0; k < scope_->size(); ++k) {
        if ((*scope_)[k] == token.text) {
          advance();
          auto e = constant(0.0, token);
          e->op = Op::parameter;
          e->parameter = k;
          return e;
        }
      }
    }
    if (auto it = constants_.find(std::string(token.text)); it != constants_.end()) {
      advance();
      return constant(it->second, token);
    }
    fail(token, "unknown identifier " + in_quotes(token.text) + " in expression (expected a number, pi, " +
                    (version_ == 3 ? "a constant or input, " : "") + "sin cos tan exp ln sqrt" +
                    (scope_ ? ", or a parameter of the gate)" : ")"));
  }
  if (is_symbol("(")) {
    Nesting nesting(*this, token);
    advance();
    ExprPtr inner = parse_expression();
    expect_symbol(")", "to close the '(' at line " + std::to_string(token.line) + ", column " +
                           std::to_string(token.column));
    return inner;
  }
  fail_expected("an expression");
}

}  // namespace paulistrings::io::qasm_detail
