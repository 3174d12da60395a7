// The OpenQASM parser's gates (qasm_parser.h declares the class): gate lookup, user `gate` definitions,
// gate calls with their broadcasting over registers, OpenQASM 3 modifiers (inv, pow, ctrl, negctrl) and
// their resolution to controlled forms, and the expansion of all of it into channels.

#include "paulistrings/io/qasm_parser.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "paulistrings/core/text.h"

namespace paulistrings::io::qasm_detail {
namespace {

/// Upper bound of the channels one application of a standard gate expands to.
std::size_t channel_bound(const StandardGate& gate) {
  switch (gate.id) {
    case StandardGateId::id:
    case StandardGateId::u0:
      return 0;
    case StandardGateId::ccx:
    case StandardGateId::rccx:
      return 9;
    case StandardGateId::cswap:
      return 11;
    case StandardGateId::c3x:
    case StandardGateId::c3sqrtx:
      return 17;
    case StandardGateId::rc3x:
      return 18;
    case StandardGateId::c4x:
      return 33;
    default:
      return 1;
  }
}

}  // namespace

Parser::GateRef Parser::lookup_gate(const Token& name) const {
  if (auto it = gate_index_.find(name.text); it != gate_index_.end()) {
    const GateDef& def = *gates_[it->second];
    return {nullptr, false, it->second, def.params.size(), def.args.size()};
  }
  if (version_ == 3 && name.text == "gphase") return {nullptr, true, 0, 1, 0};
  if (auto it = standard_.find(name.text); it != standard_.end()) {
    const StandardGate* gate = it->second;
    return {gate, false, 0, static_cast<std::size_t>(gate->params), static_cast<std::size_t>(gate->qubits)};
  }
  if (version_ == 3 && find_standard_gate(name.text, GateLibrary::qelib1) != nullptr) {
    fail(name, "unknown gate " + in_quotes(name.text) +
                   " (OpenQASM 2's qelib1.inc has it, stdgates.inc does not: define it with 'gate')");
  }
  fail(name, "unknown gate " + in_quotes(name.text));
}

Parser::GateRef Parser::ref_of(const BodyOp& op, const std::vector<std::unique_ptr<GateDef>>& gates) {
  if (op.phase) return {nullptr, true, 0, 1, 0};
  if (op.standard) {
    return {op.standard, false, 0, static_cast<std::size_t>(op.standard->params),
            static_cast<std::size_t>(op.standard->qubits)};
  }
  return {nullptr, false, op.gate, gates[op.gate]->params.size(), gates[op.gate]->args.size()};
}

std::size_t Parser::controls_of(const std::vector<Modifier>& modifiers) {
  std::size_t n = 0;
  for (const Modifier& m : modifiers) n += m.kind == Modifier::Kind::ctrl ? m.count : 0;
  return n;
}

void Parser::check_counts(const Token& name, const GateRef& gate, std::size_t params, std::size_t qubits,
                          std::size_t controls) const {
  if (params != gate.params) {
    fail(name, "gate " + in_quotes(name.text) + " takes " + count_of(gate.params, "parameter") + ", got " +
                   std::to_string(params));
  }
  if (qubits != gate.qubits + controls) {
    if (controls == 0) {
      fail(name, "gate " + in_quotes(name.text) + " takes " + count_of(gate.qubits, "qubit argument") +
                     ", got " + std::to_string(qubits));
    }
    fail(name, "gate " + in_quotes(name.text) + " with " + count_of(controls, "control") + " takes " +
                   count_of(gate.qubits + controls, "qubit argument") + ", got " + std::to_string(qubits));
  }
}

std::size_t Parser::applications_of(const GateRef& gate, const std::vector<Modifier>& modifiers) const {
  std::size_t base = gate.phase      ? 0
                     : gate.standard ? channel_bound(*gate.standard)
                                     : gates_[gate.user]->applications;
  bool reshaped = false;  // expanded through a controlled form
  for (const Modifier& m : modifiers) reshaped |= m.kind != Modifier::Kind::inv;
  if (!reshaped) return base;
  const std::size_t qubits = gate.qubits + controls_of(modifiers);
  return std::max(base, (std::size_t{1} << std::min<std::size_t>(qubits, 20)) + 4);
}

std::vector<Modifier> Parser::parse_modifiers(const std::vector<std::string>* scope) {
  std::vector<Modifier> modifiers;
  while (version_ == 3 && (is_word("inv") || is_word("pow") || is_word("ctrl") || is_word("negctrl"))) {
    Modifier m;
    m.line = tok_.line;
    m.column = tok_.column;
    const std::string_view word = tok_.text;
    advance();
    if (word == "inv") {
      m.kind = Modifier::Kind::inv;
    } else if (word == "pow") {
      m.kind = Modifier::Kind::pow;
      expect_symbol("(", "after pow");
      scope_ = scope;
      m.exponent = parse_expression();
      expect_symbol(")", "to close pow's exponent");
    } else {
      m.kind = Modifier::Kind::ctrl;
      m.negated = word == "negctrl";
      if (is_symbol("(")) {
        const Token open = tok_;
        advance();
        scope_ = nullptr;
        const ExprPtr count = parse_expression();
        expect_symbol(")", "to close the control count");
        if (!(count->value >= 1 && count->value <= 8 && count->value == std::floor(count->value))) {
          fail(open, std::string(word) + "(n): n must be an integer constant from 1 to 8, got " +
                         format_double(count->value));
        }
        m.count = static_cast<std::size_t>(count->value);
      }
    }
    expect_symbol("@", "after the modifier");
    modifiers.push_back(std::move(m));
  }
  return modifiers;
}

std::vector<AppliedModifier> Parser::applied(const std::vector<Modifier>& modifiers,
                                             std::span<const double> params, const CallSite& site) const {
  std::vector<AppliedModifier> out;
  for (const Modifier& m : modifiers) {
    out.push_back({m.kind, m.negated, m.count, m.exponent ? evaluate(*m.exponent, params, site) : 0.0});
  }
  return out;
}

Resolved Parser::resolve(const GateRef& gate, std::span<const AppliedModifier> modifiers,
                         std::span<const double> values, const CallSite& site) const {
  Resolved r;
  if (gate.phase) {
    r.is_phase = true;
    r.phase = values[0];
  } else if (gate.standard) {
    std::optional<ControlledGate> form = standard_gate_form(*gate.standard, values);
    if (!form) {
      fail(site, "gate " + in_quotes(gate.standard->name) +
                     " is defined only up to relative phases: ctrl @ and non-integer pow @ are not "
                     "supported on it");
    }
    r.form = std::move(*form);
  } else {
    const GateDef& def = *gates_[gate.user];
    if (def.args.size() > 2) {
      fail(site, "ctrl @ and non-integer pow @ need the matrix of gate " + in_quotes(def.name) +
                     ", which acts on " + count_of(def.args.size(), "qubit") +
                     ": they are supported on defined gates of at most two");
    }
    r.form.targets = static_cast<int>(def.args.size());
    r.form.core = user_matrix(def, values, site);
  }
  for (auto it = modifiers.rbegin(); it != modifiers.rend(); ++it) {
    switch (it->kind) {
      case Modifier::Kind::inv:
        if (r.is_phase) {
          r.phase = -r.phase;
        } else {
          r.form.core = matrix_adjoint(r.form.core);
        }
        break;
      case Modifier::Kind::pow:
        if (r.is_phase) {
          r.phase *= it->exponent;
        } else {
          r.form.core = unitary_power(r.form.core, it->exponent);
        }
        break;
      case Modifier::Kind::ctrl: {
        std::vector<bool> added(it->count, it->negated);
        if (r.is_phase) {
          // The last new control becomes the target of a phase gate: e^{iθ} where the controls hold.
          const Complex phase = std::polar(1.0, r.phase);
          r.form.targets = 1;
          r.form.core = it->negated ? SmallMatrix{phase, 0.0, 0.0, 1.0} : SmallMatrix{1.0, 0.0, 0.0, phase};
          added.pop_back();
          r.is_phase = false;
        }
        r.form.negated.insert(r.form.negated.begin(), added.begin(), added.end());
        break;
      }
    }
  }
  if (!r.is_phase && r.form.num_qubits() > kMaxModifiedQubits) {
    fail(site, "the modified gate acts on " + count_of(r.form.num_qubits(), "qubit") +
                   ": ctrl @ is supported up to " + std::to_string(kMaxModifiedQubits));
  }
  return r;
}

SmallMatrix Parser::user_matrix(const GateDef& def, std::span<const double> params,
                                const CallSite& site) const {
  const int k = static_cast<int>(def.args.size());
  SmallMatrix m = matrix_identity(1 << k);
  for (const BodyOp& op : def.body) {
    std::vector<double> values;
    for (const ExprPtr& e : op.params) values.push_back(evaluate(*e, params, site));
    const std::vector<AppliedModifier> modifiers = applied(op.modifiers, params, site);
    const Resolved r = resolve(ref_of(op, gates_), modifiers, values, site);
    if (r.is_phase) {
      for (Complex& v : m) v *= std::polar(1.0, r.phase);
      continue;
    }
    std::vector<int> positions;
    for (std::size_t a : op.args) positions.push_back(static_cast<int>(a));
    m = matrix_multiply(embed_matrix(controlled_matrix(r.form), positions, k), m);
  }
  return m;
}

void Parser::parse_gate_definition() {
  const Token name = expect_identifier("a gate name after 'gate'");
  check_not_keyword(name, "a gate name");
  if (auto it = gate_index_.find(name.text); it != gate_index_.end()) {
    fail(name, "gate " + in_quotes(name.text) + " is already defined at line " +
                   std::to_string(gates_[it->second]->line));
  }
  if (auto it = standard_.find(name.text); it != standard_.end()) {
    if (it->second->origin == GateOrigin::language) {
      fail(name, in_quotes(name.text) + " is a built-in gate and cannot be redefined");
    }
    if (it->second->origin == GateOrigin::library && included_) {
      fail(name, "gate " + in_quotes(name.text) + " is already defined by " +
                     (version_ == 3 ? "stdgates.inc" : "qelib1.inc"));
    }
  }
  auto def = std::make_unique<GateDef>();
  def->name = std::string(name.text);
  def->line = name.line;
  def->column = name.column;
  auto declare = [&](const Token& id, std::vector<std::string>& list, std::string_view what) {
    check_not_keyword(id, what);
    for (const auto* names : {&def->params, &def->args}) {
      for (const std::string& existing : *names) {
        if (existing == id.text)
          fail(id, in_quotes(id.text) + " is declared twice in gate " + in_quotes(def->name));
      }
    }
    list.emplace_back(id.text);
  };
  if (is_symbol("(")) {
    advance();
    if (!is_symbol(")")) {
      while (true) {
        const Token param = expect_identifier("a parameter name");
        if (param.text == "pi" || is_function(param.text)) {
          fail(param, in_quotes(param.text) + " is a reserved word and cannot be used as a parameter name");
        }
        declare(param, def->params, "a parameter name");
        if (is_symbol(",")) {
          advance();
          continue;
        }
        if (!is_symbol(")"))
          fail_expected("',' or ')' in the parameter list of gate " + in_quotes(def->name));
        break;
      }
    }
    advance();
  }
  while (true) {
    const Token arg = expect_identifier("a qubit argument name for gate " + in_quotes(def->name));
    declare(arg, def->args, "a qubit argument name");
    if (!is_symbol(",")) break;
    advance();
  }
  expect_symbol("{", "to open the body of gate " + in_quotes(def->name));
  while (!is_symbol("}")) parse_body_statement(*def);
  advance();

  std::size_t depth = 0, applications = 0;
  for (const BodyOp& op : def->body) {
    const GateRef ref = ref_of(op, gates_);
    if (!op.standard && !op.phase) depth = std::max(depth, gates_[op.gate]->depth);
    applications = saturating_add(applications, applications_of(ref, op.modifiers));
  }
  def->depth = depth + 1;
  def->applications = applications;
  if (def->depth > kMaxGateNesting) {
    fail(name, "gate " + in_quotes(def->name) + " nests user gates more than " +
                   std::to_string(kMaxGateNesting) + " levels deep");
  }
  if (auto it = standard_.find(def->name);
      it != standard_.end() && it->second->origin == GateOrigin::library) {
    shadowed_.emplace_back(def->name, def->line);
  }
  gate_index_.emplace(def->name, gates_.size());
  gates_.push_back(std::move(def));
}

bool Parser::is_function(std::string_view name) {
  for (const FunctionName& f : kFunctions)
    if (f.name == name) return true;
  return false;
}

void Parser::parse_body_statement(GateDef& def) {
  if (tok_.kind != TokenKind::identifier) {
    fail_expected("a gate application or '}' in the body of gate " + in_quotes(def.name));
  }
  const Token head = tok_;
  if (head.text == "measure" || head.text == "reset") {
    fail(head, in_quotes(head.text) + " is not allowed inside a gate body (gates are unitary)");
  }
  if (head.text == "if") fail(head, "classical control 'if' is not supported");
  if (head.text == "opaque") fail_opaque(head);
  if (head.text == "barrier") {
    advance();
    parse_body_args(def, head);
    expect_symbol(";", "after barrier arguments");
    return;
  }
  std::vector<Modifier> modifiers = parse_modifiers(&def.params);
  if (tok_.kind != TokenKind::identifier) fail_expected("a gate name after the modifiers");
  const Token name = tok_;
  if (name.text == def.name) {
    fail(name, "gate " + in_quotes(def.name) + " cannot use itself (recursive gates are not allowed)");
  }
  if (is_keyword(name.text) && name.text != "U" && name.text != "gphase") {
    if (const std::string refused = refused_construct(name.text); version_ == 3 && !refused.empty())
      fail(name, refused);
    fail(name, in_quotes(name.text) + " is not allowed inside a gate body");
  }
  const GateRef gate = lookup_gate(name);
  advance();
  BodyOp op;
  op.standard = gate.standard;
  op.phase = gate.phase;
  op.gate = gate.user;
  op.line = name.line;
  op.column = name.column;
  op.modifiers = std::move(modifiers);
  if (is_symbol("(")) op.params = parse_parameter_list(&def.params);
  if (!(gate.phase && is_symbol(";"))) op.args = parse_body_args(def, name);
  if (!is_symbol(";")) fail_expected("';' after gate arguments");
  check_counts(name, gate, op.params.size(), op.args.size(), controls_of(op.modifiers));
  advance();
  def.body.push_back(std::move(op));
}

std::vector<std::size_t> Parser::parse_body_args(const GateDef& def, const Token& gate) {
  std::vector<std::size_t> args;
  while (true) {
    if (tok_.kind != TokenKind::identifier) fail_expected("a qubit argument for " + in_quotes(gate.text));
    const Token arg = tok_;
    std::size_t k = 0;
    while (k < def.args.size() && def.args[k] != arg.text) ++k;
    if (k == def.args.size()) {
      bool is_param = false;
      for (const std::string& p : def.params) is_param |= p == arg.text;
      fail(arg, is_param
                    ? in_quotes(arg.text) + " is a parameter of gate " + in_quotes(def.name) +
                          ", not a qubit argument"
                    : "unknown qubit argument " + in_quotes(arg.text) + " in gate " + in_quotes(def.name));
    }
    if (gate.text != "barrier") {
      for (std::size_t used : args) {
        if (used == k) {
          fail(arg, "qubit argument " + in_quotes(arg.text) + " is used twice in one " +
                        in_quotes(gate.text) + " gate");
        }
      }
    }
    args.push_back(k);
    advance();
    if (is_symbol("[")) fail(tok_, "qubit arguments inside a gate body cannot be indexed");
    if (!is_symbol(",")) break;
    advance();
  }
  return args;
}

void Parser::parse_gate_call() {
  std::vector<Modifier> modifiers = parse_modifiers(nullptr);
  if (tok_.kind != TokenKind::identifier) fail_expected("a gate name after the modifiers");
  const Token name = tok_;
  const GateRef gate = lookup_gate(name);
  advance();
  std::vector<double> values;
  if (is_symbol("(")) {
    for (const ExprPtr& e : parse_parameter_list(nullptr)) values.push_back(e->value);
  }
  std::vector<QubitArg> args;
  if (!(gate.phase && is_symbol(";"))) args = parse_qubit_args(name);
  if (!is_symbol(";")) fail_expected("';' after gate arguments");
  const std::size_t controls = controls_of(modifiers);
  check_counts(name, gate, values.size(), args.size(), controls);

  // Broadcasting: whole registers go element by element; their sizes must agree.
  std::size_t repeats = 1;
  const QubitArg* first_register = nullptr;
  for (const QubitArg& arg : args) {
    if (arg.index || arg.hardware) continue;
    const Register& reg = register_of(arg);
    if (first_register && register_of(*first_register).size != reg.size) {
      const Register& first = register_of(*first_register);
      fail(arg.token, "register " + in_quotes(reg.name) + " has " + count_of(reg.size, "qubit") + " but " +
                          in_quotes(first.name) + " has " + std::to_string(first.size) +
                          ": registers in one gate must have equal sizes");
    }
    if (!first_register) first_register = &arg;
    repeats = reg.size;
  }
  const std::size_t added = saturating_multiply(applications_of(gate, modifiers), repeats);
  if (saturating_add(channels_.size(), added) > kMaxGateApplications) {
    fail(name,
         "the program expands to more than " + std::to_string(kMaxGateApplications) + " gate applications");
  }

  const CallSite site{name.line, name.column, name.text};
  const std::vector<AppliedModifier> applied_modifiers = applied(modifiers, {}, site);
  std::vector<Qubit> qubits(args.size());
  for (std::size_t j = 0; j < repeats; ++j) {
    for (std::size_t k = 0; k < args.size(); ++k) {
      qubits[k] = qubit_of(args[k], j);
      for (std::size_t l = 0; l < k; ++l) {
        if (qubits[l] == qubits[k]) {
          fail(args[k].token,
               "qubit " + qubit_name(args[k], j) + " is used twice in one " + in_quotes(name.text) + " gate");
        }
      }
    }
    if (modifiers.empty()) {
      emit_call(gate, values, qubits, site);
    } else {
      emit_modified(gate, applied_modifiers, values, qubits, site);
    }
  }
  advance();
}

double Parser::evaluate(const Expr& e, std::span<const double> params, const CallSite& site) const {
  if (e.op == Op::constant) return e.value;
  if (e.op == Op::parameter) return params[e.parameter];
  const double a = evaluate(*e.a, params, site);
  const double b = e.b ? evaluate(*e.b, params, site) : 0.0;
  double out = 0.0;
  std::string error;
  if (!compute(e.op, a, b, out, error)) {
    if (version_ == 3) error = spell_power(error);
    fail(site, error + " in the expansion of gate " + in_quotes(site.gate) + " (expression at line " +
                   std::to_string(e.line) + ", column " + std::to_string(e.column) + ")");
  }
  return out;
}

void Parser::emit_call(const GateRef& gate, std::span<const double> values, std::span<const Qubit> qubits,
                       const CallSite& site) {
  if (gate.phase) return;  // a global phase
  if (gate.standard) {
    emit_standard(*gate.standard, values, qubits, site);
  } else {
    expand(*gates_[gate.user], values, qubits, site);
  }
}

void Parser::expand(const GateDef& def, std::span<const double> params, std::span<const Qubit> qubits,
                    const CallSite& site) {
  for (const BodyOp& op : def.body) {
    std::vector<double> values;
    values.reserve(op.params.size());
    for (const ExprPtr& e : op.params) values.push_back(evaluate(*e, params, site));
    std::vector<Qubit> local;
    local.reserve(op.args.size());
    for (std::size_t k : op.args) local.push_back(qubits[k]);
    const GateRef ref = ref_of(op, gates_);
    if (op.modifiers.empty()) {
      emit_call(ref, values, local, site);
    } else {
      emit_modified(ref, applied(op.modifiers, params, site), values, local, site);
    }
  }
}

void Parser::emit_modified(const GateRef& gate, std::span<const AppliedModifier> modifiers,
                           std::span<const double> values, std::span<const Qubit> qubits,
                           const CallSite& site) {
  bool reshaped = gate.phase;
  for (const AppliedModifier& m : modifiers) {
    reshaped |= m.kind == Modifier::Kind::ctrl ||
                (m.kind == Modifier::Kind::pow && m.exponent != std::nearbyint(m.exponent));
  }
  std::vector<Channel> sequence;
  std::vector<Channel>* const saved = out_;
  out_ = &sequence;
  try {
    if (reshaped) {
      const Resolved r = resolve(gate, modifiers, values, site);
      if (!r.is_phase) append_controlled(r.form, qubits, sequence);
    } else {
      emit_call(gate, values, qubits, site);
      for (auto it = modifiers.rbegin(); it != modifiers.rend(); ++it) {
        const bool invert = it->kind == Modifier::Kind::inv || it->exponent < 0;
        if (invert) {
          std::reverse(sequence.begin(), sequence.end());
          for (Channel& c : sequence) c = c.adjoint();
        }
        if (it->kind == Modifier::Kind::pow) {
          const double times = std::abs(it->exponent);
          if (times * static_cast<double>(sequence.size()) > static_cast<double>(kMaxGateApplications)) {
            fail(site, "pow(" + format_double(it->exponent) + ") expands the program to more than " +
                           std::to_string(kMaxGateApplications) + " gate applications");
          }
          const std::vector<Channel> once = std::move(sequence);
          sequence.clear();
          for (std::size_t k = 0; k < static_cast<std::size_t>(times); ++k)
            sequence.insert(sequence.end(), once.begin(), once.end());
        }
      }
    }
  } catch (const std::invalid_argument& e) {
    out_ = saved;
    if (dynamic_cast<const ParseError*>(&e)) throw;
    fail(site, "gate " + in_quotes(site.gate) + " cannot be built: " + e.what());
  } catch (...) {
    out_ = saved;
    throw;
  }
  out_ = saved;
  for (const Channel& c : sequence) push(c, site);
}

bool Parser::is_rotation_gate(StandardGateId id) {
  switch (id) {
    case StandardGateId::rx:
    case StandardGateId::ry:
    case StandardGateId::rz:
    case StandardGateId::p:
    case StandardGateId::u1:
    case StandardGateId::rxx:
    case StandardGateId::ryy:
    case StandardGateId::rzz:
    case StandardGateId::rzx:
      return true;
    default:
      return false;
  }
}

void Parser::emit_standard(const StandardGate& gate, std::span<const double> values,
                           std::span<const Qubit> qubits, const CallSite& site) {
  if (gate.qubits > 5) throw std::logic_error("qasm: a standard gate of more than five qubits");
  // Identical applications share their channels: a decomposition is worth keeping, as is a unitary's
  // table (kilobytes); Cliffords (whose tables are shared anyway) and rotations are cheap to build.
  const bool cached = gate.qubits >= 3 || (values.size() > 0 && !is_rotation_gate(gate.id));
  CacheKey key{};
  if (cached) {
    key.gate = static_cast<std::uint8_t>(gate.id);
    for (std::size_t k = 0; k < qubits.size(); ++k) key.qubits[k] = static_cast<std::uint32_t>(qubits[k] + 1);
    for (std::size_t k = 0; k < values.size(); ++k) key.params[k] = std::bit_cast<std::uint64_t>(values[k]);
    if (auto it = cache_.find(key); it != cache_.end()) {
      for (const Channel& c : it->second) push(c, site);
      return;
    }
  }
  std::vector<Channel> channels;
  std::vector<Channel>& into = cached ? channels : *out_;  // uncached: straight into the program
  try {
    append_standard_gate(gate, values, qubits, into);
  } catch (const std::invalid_argument& e) {
    fail(site, "gate " + in_quotes(gate.name) + " cannot be built: " + e.what());
  }
  if (!cached) {
    if (out_->size() > kMaxGateApplications) {
      fail(site,
           "the program expands to more than " + std::to_string(kMaxGateApplications) + " gate applications");
    }
    return;
  }
  for (const Channel& c : channels) push(c, site);
  cache_.emplace(key, std::move(channels));
}

}  // namespace paulistrings::io::qasm_detail
