// End-to-end tests of the `paulistrings` command: every subcommand, task files with every v1 gate
// name against the library called directly, QASM and stim runs, exit codes and located one-line
// messages for bad input, traces, checkpoint/resume after SIGKILL and SIGINT, corrupted checkpoints,
// the memory budget (peak resident memory measured by the process itself), the host memory guard (its
// stop and checkpoint, an address-space limit) and the OpenMP wait policy the command chooses.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include <cmath>
#include <numbers>
#include <sstream>
#include <string>
#include <tuple>

#include "paulistrings/cpu/cpu_engine.h"
#include "paulistrings/gpu/device_sum.h"
#include "paulistrings/io/atomic_file.h"
#include "paulistrings/io/checkpoint.h"
#include "paulistrings/io/qasm.h"
#include "paulistrings/io/stim.h"
#include "paulistrings/io/task.h"
#include "paulistrings/readout/product_state.h"
#include "paulistrings/run/propagate.h"

namespace paulistrings {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

struct Result {
  int exit_code = -1;
  std::string out, err;
};

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("paulistrings-cli-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path(name)) << text;
    return path(name);
  }
  /// Runs the CLI through the shell with `arguments` (already quoted), capturing stdout and stderr.
  Result run(const std::string& arguments, const std::string& environment = "") const {
    const std::string out = path("stdout.txt"), err = path("stderr.txt");
    const std::string command =
        environment + " " + PAULISTRINGS_CLI + " " + arguments + " >" + out + " 2>" + err;
    const int status = std::system(command.c_str());
    Result r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = io::read_file(out);
    r.err = io::read_file(err);
    return r;
  }
  static Json parse(const std::string& text) { return Json::parse(text); }
  /// `arguments` with a checkpoint every 100 layers, stopped by `signal` (PAULISTRINGS_FAULT) at step
  /// `at`, then resumed from `checkpoint`: the resumed run's results (null when a step failed).
  Json KilledAndResumed(const std::string& arguments, const std::string& checkpoint, const char* signal,
                        int at) const {
    const Result killed = run(arguments + " --checkpoint " + checkpoint + " --every 100",
                              std::string("PAULISTRINGS_FAULT=") + signal + "@" + std::to_string(at));
    EXPECT_NE(killed.exit_code, 0);
    EXPECT_TRUE(fs::exists(checkpoint));
    const Result resumed = run(arguments + " --resume " + checkpoint);
    EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
    return resumed.exit_code == 0 ? parse(resumed.out) : Json();
  }

  fs::path dir_;
};

/// ⟨state|O|state⟩ of every observable of a task, computed with the library directly.
std::vector<Complex> library_values(const io::Task& task) {
  std::vector<Complex> values;
  for (const io::NamedObservable& o : task.observables) {
    AnyPauliSum sum = io::make_observable(o.terms, task.num_qubits);
    PropagateOptions options;
    options.direction = task.direction;
    options.truncation = task.truncation.policy();
    options.threads = 1;
    propagate(sum, task.circuit, options);
    const ProductState state = ProductState::parse(task.state, task.num_qubits);
    values.push_back(sum.visit([&](const auto& s) { return Complex(state.expectation(s)); }));
  }
  return values;
}

Complex value_of(const Json& j) {
  if (j.is_array()) return {j[0].get<double>(), j[1].get<double>()};
  return {j.get<double>(), 0.0};
}

constexpr const char* kEveryV1Gate = R"({
  "version": 1, "n_qubits": 4,
  "circuit": {"gates": [
    {"name": "h", "qubits": [0]}, {"name": "s", "qubits": [1]}, {"name": "sdg", "qubits": [2]},
    {"name": "x", "qubits": [3]}, {"name": "y", "qubits": [0]}, {"name": "z", "qubits": [1]},
    {"name": "cnot", "qubits": [0, 1]}, {"name": "cz", "qubits": [1, 2]}, {"name": "swap", "qubits": [2, 3]},
    {"name": "rz", "qubits": [0], "theta": 0.3}, {"name": "rx", "qubits": [1], "theta": -0.7},
    {"name": "ry", "qubits": [2], "theta": 1.1},
    {"name": "pauli_rotation", "pauli": "XZY", "qubits": [0, 2, 3], "theta": 0.45},
    {"name": "depolarize", "qubits": [0], "p": 0.01}, {"name": "dephase", "qubits": [1], "p": 0.02},
    {"name": "amplitude_damping", "qubits": [2], "gamma": 0.05},
    {"name": "pauli_channel", "qubits": [3], "px": 0.01, "py": 0.02, "pz": 0.03},
    {"name": "depolarize2", "qubits": [0, 3], "p": 0.04},
    {"name": "unitary_1q", "qubits": [1], "matrix": [[[0.6, 0], [0, 0.8]], [[0, 0.8], [0.6, 0]]]},
    {"name": "unitary_2q", "qubits": [2, 0], "matrix": [
      [[1, 0], [0, 0], [0, 0], [0, 0]], [[0, 0], [0, 1], [0, 0], [0, 0]],
      [[0, 0], [0, 0], [0, 0], [1, 0]], [[0, 0], [0, 0], [1, 0], [0, 0]]]}
  ]},
  "observable": {"ZZII": 1.0, "XIYZ": 0.5, "IIIZ": [0.25, 0]},
  "truncation": {"max_weight": 4, "min_abs_coeff": 1e-9},
  "run": {"direction": "heisenberg", "threads": 1, "state": "0+r1"}
})";

TEST_F(Cli, RunsAV1TaskWithEveryGateNameLikeTheLibrary) {
  const std::string task_path = write("task.json", kEveryV1Gate);
  for (const char* direction : {"heisenberg", "forward"}) {
    SCOPED_TRACE(direction);
    std::string text = kEveryV1Gate;
    text.replace(text.find("\"heisenberg\""), 12, std::string("\"") + direction + "\"");
    write("task.json", text);
    const Result r = run("run " + task_path + " --quiet");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const Json j = parse(r.out);
    const io::Task task = io::load_task(task_path);
    const std::vector<Complex> expected = library_values(task);
    const Complex actual = value_of(j["observables"]["observable"]["value"]);
    EXPECT_NEAR(actual.real(), expected[0].real(), 1e-12);
    EXPECT_NEAR(actual.imag(), expected[0].imag(), 1e-12);
    EXPECT_EQ(j["layers"], 20);
    EXPECT_EQ(j["num_qubits"], 4);
    EXPECT_EQ(j["engine"], "cpu");
    EXPECT_EQ(j["threads"], 1);
    EXPECT_TRUE(j.contains("paulistrings") && j.contains("wall_time_s") && j.contains("peak_terms"));
  }
}

TEST_F(Cli, RunsExtensionsSeveralObservablesSparseLabelsTopN) {
  const std::string task_path = write("task.json", R"({
    "version": 1, "n_qubits": 70,
    "circuit": {"gates": [{"name": "h", "qubits": [65]}, {"name": "rxx", "qubits": [65, 3], "theta": 0.4},
                          {"name": "cy", "qubits": [3, 69]}, {"name": "sx", "qubits": [0]}]},
    "observables": {"zz": {"Z65 Z3": 1.0}, "x": {"X0": 2.0, "Y69": 0.5}},
    "truncation": {"top_n": 10, "approx_top_n": 20},
    "run": {"direction": "heisenberg", "threads": 2, "state": "x+", "device": "auto"}
  })");
  const Result r = run("run " + task_path + " -q --out " + path("results.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  const Json j = parse(io::read_file(path("results.json")));
  const std::vector<Complex> expected = library_values(io::load_task(task_path));
  EXPECT_NEAR(value_of(j["observables"]["zz"]["value"]).real(), expected[0].real(), 1e-12);
  EXPECT_NEAR(value_of(j["observables"]["x"]["value"]).real(), expected[1].real(), 1e-12);
  EXPECT_EQ(j["threads"], 2);
}

TEST_F(Cli, RunsQasmAndStimDirectly) {
  const std::string qasm = write("c.qasm", R"(OPENQASM 2.0;
include "qelib1.inc";
qreg q[3];
h q[0];
cx q[0], q[1];
rz(pi/7) q[1];
u3(0.3, 0.2, 0.1) q[2];
crx(0.5) q[2], q[0];
barrier q;
)");
  const Result r = run("run --qasm " + qasm + " --observable 'Z0 Z1' --observable '0.5*X2' --state z+ -q");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  io::Task task;
  task.circuit = io::load_qasm(qasm);
  task.num_qubits = 3;
  task.observables = {{"observable", {{"Z0 Z1", 1.0}, {"X2", 0.5}}}};
  task.direction = Direction::heisenberg;
  EXPECT_NEAR(value_of(parse(r.out)["observables"]["observable"]["value"]).real(),
              library_values(task)[0].real(), 1e-12);

  const std::string stim = write("c.stim", "H 0\nCX 0 1\nDEPOLARIZE1(0.1) 1\nOBSERVABLE_INCLUDE(0) Z0 Z1\n");
  const Result s = run("run --stim " + stim + " -q --coeff 1e-12");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  // ⟨00| CX H … Z0Z1 … |00⟩ with Z1 depolarized: (1 − 4p/3) · ⟨Φ+|ZZ|Φ+⟩ = 1 − 0.4/3.
  EXPECT_NEAR(value_of(parse(s.out)["observables"]["observable"]["value"]).real(), 1.0 - 0.4 / 3, 1e-12);
}

TEST_F(Cli, KickedIsingOneStepAndItsTaskFile) {
  const Result r = run("kicked-ising --steps 1 --theta-h 0.25 -q --write-task " + path("ki.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NEAR(value_of(parse(r.out)["observables"]["Z62"]["value"]).real(), std::cos(0.25), 1e-12);
  const Result again = run("run " + path("ki.json") + " -q");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(parse(again.out)["observables"]["Z62"]["value"], parse(r.out)["observables"]["Z62"]["value"]);
  const Result pi = run("kicked-ising --steps 1 --theta-h pi/2 --observable mz -q");
  ASSERT_EQ(pi.exit_code, 0) << pi.err;
  EXPECT_NEAR(value_of(parse(pi.out)["observables"]["mz"]["value"]).real(), 0.0, 1e-12);
}

TEST_F(Cli, DemoPrintsATable) {
  const Result r = run("demo --steps 1 --points 3 --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("theta_h"), std::string::npos);
  EXPECT_NE(r.out.find("1*pi/16"), std::string::npos);
  EXPECT_NE(r.out.find(std::to_string(std::cos(std::numbers::pi / 16)).substr(0, 7)), std::string::npos)
      << r.out;
}

TEST_F(Cli, BadInputExitsWithCodeTwoAndOneLocatedLine) {
  struct Case {
    std::string file, text, arguments, expected;
  };
  const std::vector<Case> cases = {
      {"bad.json", "{\"version\": 1,\n  \"n_qubits\": }", "", "bad.json:2:"},
      {"v2.json",
       R"({"version": 2, "n_qubits": 1, "circuit": {"gates": []}, "run": {"direction": "forward"}})", "",
       "version"},
      {"gate.json",
       R"({"version": 1, "n_qubits": 1, "circuit": {"gates": [{"name": "rx", "qubits": [0]}]}, "run": {"direction": "forward"}, "observable": {"Z": 1}})",
       "", "circuit.gates[0]"},
      {"bad.qasm", "OPENQASM 2.0;\nqreg q[2];\nmeasure q[0] -> c[0];\n", "--qasm", "bad.qasm:3:"},
      {"bad.stim", "H 0\nM X0\n", "--stim", "bad.stim:2:"},
      {"noobs.json",
       R"({"version": 1, "n_qubits": 1, "circuit": {"gates": []}, "run": {"direction": "forward"}})", "",
       "no observable"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    const std::string file = write(c.file, c.text);
    const Result r =
        run(c.arguments.empty() ? "run " + file : "run " + c.arguments + " " + file + " --observable Z0");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.out, "");
  }
  EXPECT_EQ(run("run " + path("missing.json")).exit_code, 2);
  EXPECT_EQ(run("run --bogus-flag").exit_code, 2);
  EXPECT_EQ(run("kicked-ising --steps 1 --theta-h 3*pie").exit_code, 2);
  EXPECT_EQ(run("kicked-ising --steps 1 --theta-h 0.1 --device gpux -q").exit_code, 2);
  EXPECT_EQ(run("kicked-ising --steps 1 --theta-h 0.1 --memory-limit 12Q -q").exit_code, 2);
  // No output file is created when the run fails.
  EXPECT_EQ(run("run " + path("noobs.json") + " --out " + path("never.json")).exit_code, 2);
  EXPECT_FALSE(fs::exists(path("never.json")));
}

// Numbers on the command line are read strictly (core/text.h; docs/cli.md, "Numbers"): "1e0" is 1 and
// "2e0" is 2, while fractions, signs, trailing text, overflow, NaN and infinity are one line quoting the
// token, with exit code 2 — never a prefix, a wrapped value or a silently rounded one.
TEST_F(Cli, NumbersAreExactOrRefusedQuotingTheToken) {
  const std::string qasm =
      write("n.qasm", "OPENQASM 2.0;\ninclude \"qelib1.inc\";\nqreg q[2];\nh q[0];\ncx q[0], q[1];\n");
  const std::string kicked = "kicked-ising --steps 1 --theta-h 0.1 -q ";
  const std::string param = "run --qasm " +
                            write("in.qasm",
                                  "OPENQASM 3.0;\ninclude \"stdgates.inc\";\ninput float[64] theta;\nqubit[1] q;\n"
                                  "rx(theta) q[0];\n") +
                            " -q --observable Z0 --param ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"kicked-ising --steps 1.5 --theta-h 0.1 -q", "--steps: '1.5' is not a whole number"},
      {"kicked-ising --steps -1 --theta-h 0.1 -q", "--steps: '-1' is negative"},
      {"kicked-ising --steps 1x --theta-h 0.1 -q", "--steps: '1x' is not a number ('x' after it)"},
      {"kicked-ising --steps 99999999999999999999 --theta-h 0.1 -q",
       "--steps: '99999999999999999999' is too large"},
      {"kicked-ising --steps 1 --theta-h 0x1p2 -q", "bad angle '0x1p2'"},
      {"kicked-ising --steps 1 --theta-h nan -q", "bad angle 'nan'"},
      {kicked + "--threads 2147483648", "--threads: '2147483648' is too large (at most 2147483647)"},
      {kicked + "--threads 0x2", "--threads: '0x2' is not a number ('x2' after it)"},
      {kicked + "--threads ' 2'", "--threads: ' 2' is not a number"},
      {kicked + "--every 1e-1 --checkpoint " + path("c.ckpt"), "--every: '1e-1' is not a whole number"},
      {kicked + "--memory-limit 1.3K", "--memory-limit: '1.3K' is not a whole number"},
      {kicked + "--memory-limit 99999999999999999999G",
       "--memory-limit: '99999999999999999999G' is too large"},
      {kicked + "--memory-limit 1e", "--memory-limit: '1e' is not a byte size"},
      {kicked + "--device -1", "--device: '-1' is negative (expected cpu, gpu, auto or a GPU index)"},
      {kicked + "--device 1.5", "--device: '1.5' is not a whole number"},
      {kicked + "--partitions 3.5", "--partitions: '3.5' is not a whole number"},
      {kicked + "--route-orbits-from -5 --partitions 2", "--route-orbits-from: '-5' is negative"},
      {kicked + "--partitions 2 --partition-rows seeded:1.5",
       "--partition-rows: seed '1.5' is not a whole number"},
      {kicked + "--coeff 1e999", "--coeff: '1e999' is out of range"},
      {kicked + "--weight 2.5", "--weight: '2.5' is not a whole number"},
      {"run --qasm " + qasm + " -q --coeff nan", "--coeff: 'nan' is not a number"},
      {"run --qasm " + qasm + " -q --top-n 1e400", "--top-n: '1e400' is too large"},
      {"run --qasm " + qasm + " -q --approx-top-n 10.5", "--approx-top-n: '10.5' is not a whole number"},
      {"run --qasm " + qasm + " -q --observable '1e999*Z0'", "bad --observable term '1e999*Z0'"},
      {"demo --steps 1 --points 1.0e0x -q", "--points: '1.0e0x' is not a number"},
      {param + "theta=1e999", "bad angle '1e999'"},
      {param + "theta=0.5x", "bad angle '0.5x'"},
      {param + "theta=", "bad angle ''"},
      {param + "theta=-", "bad angle '-'"},
      {param + "theta=nan", "bad angle 'nan'"},
  };
  for (const auto& [arguments, expected] : cases) {
    SCOPED_TRACE(arguments);
    const Result r = run(arguments);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  // Scientific notation that names a whole number means that number.
  const Result two = run("kicked-ising --steps 2 --theta-h 0.3 --threads 1 -q");
  const Result two_e0 = run("kicked-ising --steps 2e0 --theta-h 0.3 --threads 1.0 --weight 1e2 -q");
  ASSERT_EQ(two.exit_code, 0) << two.err;
  ASSERT_EQ(two_e0.exit_code, 0) << two_e0.err;
  EXPECT_EQ(parse(two.out)["observables"]["Z62"]["value"], parse(two_e0.out)["observables"]["Z62"]["value"]);
  EXPECT_EQ(parse(two_e0.out)["observables"]["Z62"]["final_terms"],
            parse(two.out)["observables"]["Z62"]["final_terms"]);
  const Result topn = run("run --qasm " + qasm + " -q --observable Z1 --top-n 1e3 --memory-limit 1.5G");
  EXPECT_EQ(topn.exit_code, 0) << topn.err;
  // An OpenQASM 3 input in scientific notation is the number it spells.
  const Result half = run(param + "theta=0.5");
  const Result half_e = run(param + "theta=5e-1");
  ASSERT_EQ(half.exit_code, 0) << half.err;
  ASSERT_EQ(half_e.exit_code, 0) << half_e.err;
  EXPECT_EQ(parse(half.out)["observables"]["observable"]["value"],
            parse(half_e.out)["observables"]["observable"]["value"]);
}

/// Circuit files as they come: measurements and resets counted in the results, --ignore-measure, qubits
/// named by register in observables, OpenQASM 3 inputs from --param, a missing version line warned about.
TEST_F(Cli, QasmFilesWithMeasurementsRegistersAndParameters) {
  // Bell pair on a[0], b[0], measured; b[0] is then reset. ⟨Za[0] Zb[0]⟩ = 1 through the measurements,
  // ⟨Xa[0] Xb[0]⟩ = 0 with them and 1 without; after the reset ⟨Zb[0]⟩ = 1.
  const std::string file =
      write("bell.qasm",
            "OPENQASM 2.0;\ninclude \"qelib1.inc\";\nqreg a[2];\nqreg b[1];\ncreg c[3];\n"
            "h a[0];\ncx a[0], b[0];\nmeasure a[0] -> c[0];\nmeasure b[0] -> c[1];\n");
  Result r = run("run --qasm " + file + " --observable 'Za[0] Zb[0]' -q");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json j = parse(r.out);
  EXPECT_EQ(j["measurements"], 2);
  EXPECT_EQ(j["resets"], 0);
  EXPECT_FALSE(j.contains("ignore_measure"));
  EXPECT_NEAR(value_of(j["observables"]["observable"]["value"]).real(), 1.0, 1e-12);
  r = run("run --qasm " + file + " --observable 'Xa[0] Xb[0]' -q");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NEAR(value_of(parse(r.out)["observables"]["observable"]["value"]).real(), 0.0, 1e-12);
  r = run("run --qasm " + file + " --observable 'Xa[0] Xb[0]' --ignore-measure -q");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  j = parse(r.out);
  EXPECT_NEAR(value_of(j["observables"]["observable"]["value"]).real(), 1.0, 1e-12);
  EXPECT_EQ(j["measurements"], 2);  // counted, then left out
  EXPECT_EQ(j["ignore_measure"], true);
  // Register b starts after a's two qubits: Zb[0] is Z2.
  r = run("run --qasm " + file + " --observable 'Zb[0]' --observable '-1*Z2' -q");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NEAR(value_of(parse(r.out)["observables"]["observable"]["value"]).real(), 0.0, 1e-12);
  r = run("run --qasm " + file + " --observable 'Zc[0]' -q");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no qubit register named 'c' (its registers: a, b)"), std::string::npos) << r.err;
  r = run("run --qasm " + file + " --observable 'Za[2]' -q");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("register 'a' has 2 qubits"), std::string::npos) << r.err;

  // OpenQASM 3 with an input, a reset and a modifier.
  const std::string file3 =
      write("p.qasm",
            "OPENQASM 3.0;\ninclude \"stdgates.inc\";\ninput float[64] theta;\nqubit[2] q;\n"
            "bit[2] c;\nry(theta) q[0];\nctrl @ x q[0], q[1];\nreset q[0];\nc[1] = measure q[1];\n");
  r = run("run --qasm " + file3 + " --param theta=pi/3 --observable 'Zq[1]' -q");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  j = parse(r.out);
  EXPECT_NEAR(value_of(j["observables"]["observable"]["value"]).real(), std::cos(std::numbers::pi / 3),
              1e-12);
  EXPECT_EQ(j["measurements"], 1);
  EXPECT_EQ(j["resets"], 1);
  r = run("run --qasm " + file3 + " --observable Z1 -q");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind(file3 + ":3:17: input 'theta' has no value", 0), 0u) << r.err;
  r = run("run --qasm " + file3 + " --param theta=1 --param phi=2 --observable Z1 -q");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no input of that name"), std::string::npos) << r.err;
  EXPECT_EQ(run("run --qasm " + file3 + " --param theta --observable Z1 -q").exit_code, 2);

  // A file without a version line runs, with a located warning.
  const std::string old = write("old.qasm", "include \"qelib1.inc\";\nqreg q[1];\nx q[0];\n");
  r = run("run --qasm " + old + " --observable Z0 -q");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, old + ":1:1: warning: no 'OPENQASM' version line; reading the program as OpenQASM 2.0\n");
  EXPECT_NEAR(value_of(parse(r.out)["observables"]["observable"]["value"]).real(), -1.0, 1e-12);
}

TEST_F(Cli, TaskFilesNameQasmFilesAndTheirRegisters) {
  write(
      "c.qasm",
      "OPENQASM 3;\ninclude \"stdgates.inc\";\ninput float[64] t;\nqubit[1] anc;\nqubit[2] q;\nrx(t) q[1];\n"
      "measure q[0];\n");
  const std::string task = write("t.json", R"({"version": 1, "n_qubits": 3,
    "circuit": {"qasm_file": "c.qasm", "params": {"t": 0.5}},
    "observables": {"a": {"Zq[1]": 1.0}, "b": {"Xq[0]": 1.0}},
    "run": {"direction": "heisenberg", "ignore_measure": true}})");
  Result r = run("run " + task + " -q");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = parse(r.out);
  EXPECT_NEAR(value_of(j["observables"]["a"]["value"]).real(), std::cos(0.5), 1e-12);
  EXPECT_EQ(j["measurements"], 1);
  EXPECT_EQ(j["ignore_measure"], true);
  const std::string bad = write("bad.json", R"({"version": 1, "n_qubits": 3,
    "circuit": {"qasm_file": "c.qasm", "params": {"t": 0.5}}, "observable": {"Zr[0]": 1.0},
    "run": {"direction": "heisenberg"}})");
  r = run("run " + bad + " -q");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("observable.Zr[0]"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no qubit register named 'r'"), std::string::npos) << r.err;
}

/// Malformed QASM and stim programs through the command: exit code 2, one line starting with
/// "file:line:column: ", never a crash (the readers' own tests cover the messages in detail).
TEST_F(Cli, MalformedProgramsExitWithCodeTwoAndALocatedLine) {
  const std::string h = "OPENQASM 2.0;\ninclude \"qelib1.inc\";\nqreg q[2];\n";
  const std::vector<std::pair<std::string, int>> qasm = {{"", 1},
                                                         {"OPENQASM 4.0;\n", 1},
                                                         {"qreg q[2]\nh q;\n", 2},
                                                         {"OPENQASM 2.0\nqreg q[1];\n", 2},
                                                         {h + "h q[2];\n", 4},
                                                         {h + "h r[0];\n", 4},
                                                         {h + "foo q[0];\n", 4},
                                                         {h + "cx q[0];\n", 4},
                                                         {h + "cx q[0], q[0];\n", 4},
                                                         {h + "rx q[0];\n", 4},
                                                         {h + "rx(0.1, 0.2) q[0];\n", 4},
                                                         {h + "rx(1/0) q[0];\n", 4},
                                                         {h + "rx((0.1) q[0];\n", 4},
                                                         {h + "measure q[0] -> c[0];\n", 4},
                                                         {h + "reset r[0];\n", 4},
                                                         {h + "creg c[1];\nif (c == 1) x q[0];\n", 5},
                                                         {h + "opaque g q;\n", 4},
                                                         {h + "h q[0]\nh q[1];\n", 5},
                                                         {h + "/* unterminated\n", 4},
                                                         {h + "qreg q[3];\n", 4},
                                                         {h + "rx(0.1e) q[0];\n", 4},
                                                         {h + "gate g a { h b; }\n", 4},
                                                         {h + "u3(1,2) q[0];\n", 4},
                                                         {h + "include \"other.inc\";\n", 4},
                                                         {h + "h q[-1];\n", 4},
                                                         {h + "\x01\x02;\n", 4},
                                                         {h + "rx(sin) q[0];\n", 4},
                                                         {h + "swap q[0], q;\n", 4},
                                                         {h + "qreg r[1];\ncx q, r;\n", 5},
                                                         {h + "h q[0];;\n", 4}};
  const std::vector<std::pair<std::string, int>> stim = {{"M X0\n", 1},
                                                         {"H 0\nMR(2) 1\n", 2},
                                                         {"R rec[-1]\n", 1},
                                                         {"DETECTOR 1\n", 1},
                                                         {"FOO 1\n", 1},
                                                         {"H(0.1) 0\n", 1},
                                                         {"DEPOLARIZE1 0\n", 1},
                                                         {"DEPOLARIZE1(1.5) 0\n", 1},
                                                         {"DEPOLARIZE1(nan) 0\n", 1},
                                                         {"CX 0\n", 1},
                                                         {"CX 0 0\n", 1},
                                                         {"H x\n", 1},
                                                         {"H -1\n", 1},
                                                         {"H 99999999999999999999\n", 1},
                                                         {"REPEAT 0 {\nH 0\n}\n", 1},
                                                         {"REPEAT 2 {\nH 0\n", 1},
                                                         {"}\n", 1},
                                                         {"H !0\n", 1},
                                                         {"CX rec[-1] 0\n", 1},
                                                         {"X_ERROR(0.1, 0.2) 0\n", 1},
                                                         {"OBSERVABLE_INCLUDE(0) rec[-1]\n", 1},
                                                         {"PAULI_CHANNEL_1(0.1,0.1,0.1) 0\n", 1},
                                                         {"CORRELATED_ERROR(0.1) X0\n", 1},
                                                         {"MPP X0*X0\n", 1},
                                                         {"H 0\nH 1\nDEPOLARIZE2(0.1) 0 1 2\n", 3}};
  std::size_t index = 0;
  for (const auto& [programs, flag, extension] :
       {std::tuple{&qasm, "--qasm", ".qasm"}, std::tuple{&stim, "--stim", ".stim"}}) {
    for (const auto& [text, line] : *programs) {
      const std::string name = "bad" + std::to_string(index++) + extension;
      SCOPED_TRACE(name + ": " + text);
      const std::string file = write(name, text);
      const Result r = run(std::string("run ") + flag + " " + file + " --observable Z0 -q");
      EXPECT_EQ(r.exit_code, 2) << r.err;
      EXPECT_EQ(r.err.rfind(file + ":" + std::to_string(line) + ":", 0), 0u) << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    }
  }
  EXPECT_GE(index, 55u);
}

// --device gpu runs on the GPU engine with the CPU's result; without a GPU it fails with the reason
// (exit 1: a missing device is a runtime condition, not bad input).
TEST_F(Cli, DeviceGpuRunsOnTheGpuOrSaysWhyNot) {
  const Result cpu = run("kicked-ising --steps 2 --theta-h 0.3 --device cpu -q");
  ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
  const Result gpu_run = run("kicked-ising --steps 2 --theta-h 0.3 --device gpu -q");
  const Result missing = run("kicked-ising --steps 2 --theta-h 0.3 --device 4096 -q");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("device 4096"), std::string::npos) << missing.err;
  if (gpu::device_count() == 0) {
    EXPECT_EQ(gpu_run.exit_code, 1);
    EXPECT_NE(gpu_run.err.find(gpu::unavailable_reason()), std::string::npos) << gpu_run.err;
    EXPECT_EQ(run("kicked-ising --steps 1 --theta-h 0.3 --device auto -q").exit_code, 0);  // falls back to the CPU
    return;
  }
  ASSERT_EQ(gpu_run.exit_code, 0) << gpu_run.err;
  const Json a = parse(cpu.out), b = parse(gpu_run.out);
  EXPECT_EQ(b["engine"], "gpu");
  for (auto& [name, entry] : a["observables"].items()) {
    EXPECT_NEAR(value_of(b["observables"][name]["value"]).real(), value_of(entry["value"]).real(), 1e-12);
    EXPECT_EQ(b["observables"][name]["final_terms"], entry["final_terms"]);
  }
}

// --partitions N runs the in-process partitioned engine with the single-partition result, and reports
// what crossed partitions; a count that is not a power of two is bad input.
TEST_F(Cli, PartitionsGiveTheSingleEngineResult) {
  const Result one = run("kicked-ising --steps 2 --theta-h 0.3 --threads 2 -q");
  const Result four = run("kicked-ising --steps 2 --theta-h 0.3 --threads 2 --partitions 4 -q");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  ASSERT_EQ(four.exit_code, 0) << four.err;
  const Json a = parse(one.out), b = parse(four.out);
  EXPECT_EQ(b["partitions"], 4);
  for (auto& [name, entry] : a["observables"].items()) {
    EXPECT_NEAR(value_of(b["observables"][name]["value"]).real(), value_of(entry["value"]).real(), 1e-12);
    EXPECT_EQ(b["observables"][name]["final_terms"], entry["final_terms"]);
    EXPECT_GT(b["observables"][name]["partitions"]["remote_layers"].get<std::size_t>(), 0u);
    EXPECT_LE(b["observables"][name]["partitions"]["orbit_routed_layers"].get<std::size_t>(),
              b["observables"][name]["partitions"]["remote_layers"].get<std::size_t>());
    EXPECT_EQ(b["observables"][name]["partitions"]["transport"], "in-process");
    // Per partition: terms that add up to the result's, and each partition's time split.
    const Json& by_partition = b["observables"][name]["partitions"]["final_terms_by_partition"];
    ASSERT_EQ(by_partition.size(), 4u);
    std::size_t terms = 0;
    for (const Json& t : by_partition) terms += t.get<std::size_t>();
    EXPECT_EQ(terms, b["observables"][name]["final_terms"].get<std::size_t>());
    EXPECT_EQ(b["observables"][name]["partitions"]["transport_seconds"].size(), 4u);
    EXPECT_EQ(b["observables"][name]["partitions"]["work_seconds"].size(), 4u);
  }
  for (const char* bad : {"--partitions 3", "--partitions 0", "--partitions 128"}) {
    const Result r = run(std::string("kicked-ising --steps 1 --theta-h 0.3 -q ") + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
    EXPECT_NE(r.err.find("partitions"), std::string::npos) << r.err;
  }
}

// --partition-rows chooses the rows: the heavy-hex cut at qubit 52 makes 4 of the kicked-Ising step's
// 271 layers remote (random rows: 139), with the same value; bad specs and flags that need a
// partitioned run (or GPU ranks under mpirun, for --nccl) are bad input.
TEST_F(Cli, PartitionRowsChooseTheCutAndNcclNeedsGpuRanks) {
  const Result one = run("kicked-ising --steps 2 --theta-h 0.3 --threads 2 -q --observable Z62");
  const Result cut =
      run("kicked-ising --steps 2 --theta-h 0.3 --threads 2 -q --observable Z62 --partitions 2 "
          "--partition-rows cut:0-51/52-126");
  const Result seeded =
      run("kicked-ising --steps 2 --theta-h 0.3 --threads 2 -q --observable Z62 --partitions 2 "
          "--partition-rows seeded:7");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  ASSERT_EQ(cut.exit_code, 0) << cut.err;
  ASSERT_EQ(seeded.exit_code, 0) << seeded.err;
  const Json a = parse(one.out), b = parse(cut.out), c = parse(seeded.out);
  for (auto& [name, entry] : a["observables"].items()) {
    EXPECT_NEAR(value_of(b["observables"][name]["value"]).real(), value_of(entry["value"]).real(), 1e-12);
    EXPECT_NEAR(value_of(c["observables"][name]["value"]).real(), value_of(entry["value"]).real(), 1e-12);
    EXPECT_EQ(b["observables"][name]["partitions"]["remote_layers"], 8u);  // 4 a step
    EXPECT_EQ(b["observables"][name]["partitions"]["rows"].get<std::string>().rfind("cut(2 blocks, z)", 0), 0u);
    EXPECT_EQ(c["observables"][name]["partitions"]["rows"], "seeded(7)");
    EXPECT_GT(c["observables"][name]["partitions"]["remote_layers"].get<std::size_t>(), 8u);
  }
  const std::string base = "kicked-ising --steps 1 --theta-h 0.3 -q ";
  for (const auto& [flags, message] : std::vector<std::pair<std::string, std::string>>{
           {"--partitions 2 --partition-rows cut:0-51/52-126/3", "needs 2 blocks, got 3"},
           {"--partitions 2 --partition-rows cut:0-9,x", "'x' is not an index in '0-9,x'"},
           {"--partitions 2 --partition-rows cut:9-3/4", "runs backwards"},
           {"--partitions 2 --partition-rows seeded:abc", "seed 'abc'"},
           {"--partitions 2 --partition-rows diagonal:1", "unknown policy 'diagonal'"},
           {"--partitions 2 --partition-rows exclude", "names no qubits"},
           {"--partition-rows cut:0-51/52-126", "need a partitioned run"},
           {"--partitions 2 --nccl", "run under mpirun with --device gpu"},
       }) {
    const Result r = run(base + flags);
    EXPECT_EQ(r.exit_code, 2) << flags << ": " << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << flags << ": " << r.err;
  }
}

// --route-orbits-from N (run.route_orbits_from): remote general layers move whole orbits to one partition
// first from N terms in the largest partition (0 = always). A noisy circuit of general one- and two-qubit
// tables on 4 partitions: routed with 0, not with the default (the sum stays far below 8192 terms), the
// library's value either way; the flag without partitions, or a value that is no count, is bad input.
TEST_F(Cli, RouteOrbitsFromChoosesOrbitRouting) {
  std::string gates;
  for (int q = 0; q < 8; ++q) {
    const std::string u = std::to_string(q), v = std::to_string((q + 3) % 8);
    gates += R"({"name": "h", "qubits": [)" + u + "]}, ";
    gates += R"({"name": "unitary_1q", "qubits": [)" + u + R"(], "matrix": [[[0.6, 0], [0, 0.8]], [[0, 0.8], [0.6, 0]]]}, )";
    gates += R"({"name": "amplitude_damping", "qubits": [)" + v + R"(], "gamma": 0.1}, )";
    gates += R"({"name": "cnot", "qubits": [)" + u + ", " + v + "]}, ";
  }
  gates += R"({"name": "z", "qubits": [0]})";
  const std::string task = R"({"version": 1, "n_qubits": 8, "circuit": {"gates": [)" + gates +
                           R"(]}, "observable": {"ZZZZZZZZ": 1.0, "XIIIIIIY": 0.5},
    "run": {"direction": "heisenberg", "partitions": 4, "threads": 2 ROUTE}})";
  std::string with_key = task, without_key = task;
  with_key.replace(with_key.find(" ROUTE"), 6, R"(, "route_orbits_from": 0)");
  without_key.replace(without_key.find(" ROUTE"), 6, "");
  const std::string routed_path = write("routed.json", with_key), plain_path = write("plain.json", without_key);
  const Complex expected = library_values(io::load_task(plain_path))[0];
  const auto routed_layers = [&](const Result& r) {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const Json j = parse(r.out);
    const Json& entry = j["observables"]["observable"];
    EXPECT_NEAR(value_of(entry["value"]).real(), expected.real(), 1e-12);
    EXPECT_GT(entry["partitions"]["remote_layers"].get<std::size_t>(), 0u);
    return entry["partitions"]["orbit_routed_layers"].get<std::size_t>();
  };
  EXPECT_GT(routed_layers(run("run " + routed_path + " -q")), 0u);
  EXPECT_GT(routed_layers(run("run " + plain_path + " -q --route-orbits-from 0")), 0u);
  EXPECT_EQ(routed_layers(run("run " + plain_path + " -q")), 0u);
  EXPECT_EQ(routed_layers(run("run " + routed_path + " -q --route-orbits-from 100000")), 0u);  // the flag wins
  const Result unpartitioned = run("run " + plain_path + " -q --partitions 1 --route-orbits-from 0");
  EXPECT_EQ(unpartitioned.exit_code, 2) << unpartitioned.err;
  EXPECT_NE(unpartitioned.err.find("for partitioned runs"), std::string::npos) << unpartitioned.err;
  std::string negative = with_key;
  negative.replace(negative.find(R"("route_orbits_from": 0)"), 22, R"("route_orbits_from": -5)");
  const Result bad = run("run " + write("bad.json", negative) + " -q");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("run.route_orbits_from"), std::string::npos) << bad.err;
}

// --partitions N with --device gpu puts partition r on GPU r mod (GPUs); without one, or for a GPU
// that does not exist, the run fails with the reason (exit 1, as without partitions).
TEST_F(Cli, PartitionsOnGpusGiveTheCpuResultOrSayWhyNot) {
  const Result missing = run("kicked-ising --steps 1 --theta-h 0.3 -q --partitions 2 --device 4096");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("device 4096"), std::string::npos) << missing.err;
  const Result cpu = run("kicked-ising --steps 2 --theta-h 0.3 --threads 2 -q");
  const Result gpus = run("kicked-ising --steps 2 --theta-h 0.3 -q --partitions 2 --device gpu");
  ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
  if (gpu::device_count() == 0) {
    EXPECT_EQ(gpus.exit_code, 1);
    EXPECT_NE(gpus.err.find(gpu::unavailable_reason()), std::string::npos) << gpus.err;
    const Result fallback = run("kicked-ising --steps 1 --theta-h 0.3 -q --partitions 2 --device auto");
    ASSERT_EQ(fallback.exit_code, 0) << fallback.err;
    EXPECT_EQ(parse(fallback.out)["engine"], "cpu");
    return;
  }
  ASSERT_EQ(gpus.exit_code, 0) << gpus.err;
  const Json a = parse(cpu.out), b = parse(gpus.out);
  EXPECT_EQ(b["engine"], "gpu");
  EXPECT_EQ(b["partitions"], 2);
  for (auto& [name, entry] : a["observables"].items()) {
    EXPECT_NEAR(value_of(b["observables"][name]["value"]).real(), value_of(entry["value"]).real(), 1e-12);
    EXPECT_EQ(b["observables"][name]["final_terms"], entry["final_terms"]);
    EXPECT_GT(b["observables"][name]["partitions"]["remote_layers"].get<std::size_t>(), 0u);
  }
}

TEST_F(Cli, WritesTracesAsCsvAndJsonLines) {
  ASSERT_EQ(run("kicked-ising --steps 1 --theta-h 0.3 -q --trace " + path("t.csv")).exit_code, 0);
  std::istringstream csv(io::read_file(path("t.csv")));
  std::string header;
  std::getline(csv, header);
  EXPECT_EQ(header.rfind("observable,layer,circuit_index,gate,terms_in,terms_out,discarded_weight", 0), 0u);
  std::size_t rows = 0;
  for (std::string line; std::getline(csv, line);) ++rows;
  EXPECT_EQ(rows, 127u + 144u);

  ASSERT_EQ(run("kicked-ising --steps 1 --theta-h 0.3 -q --trace " + path("t.jsonl")).exit_code, 0);
  std::istringstream jsonl(io::read_file(path("t.jsonl")));
  std::size_t layer = 0;
  for (std::string line; std::getline(jsonl, line); ++layer) {
    const Json row = parse(line);
    EXPECT_EQ(row["layer"], layer);
    EXPECT_GT(row["resident_bytes"].get<std::size_t>(), 0u);
  }
  EXPECT_EQ(layer, 127u + 144u);
}

// A partitioned run's trace carries what crossed partitions in each layer; an unpartitioned one leaves
// those CSV columns empty.
TEST_F(Cli, PartitionedTracesCarryTheExchangePerLayer) {
  const std::string arguments =
      "kicked-ising --steps 1 --theta-h 0.3 --observable mz --threads 2 -q --partitions 2 --trace ";
  ASSERT_EQ(run(arguments + path("p.jsonl")).exit_code, 0);
  std::istringstream jsonl(io::read_file(path("p.jsonl")));
  std::size_t rows = 0, remote = 0, exported = 0;
  for (std::string line; std::getline(jsonl, line); ++rows) {
    const Json row = parse(line);
    ASSERT_TRUE(row.contains("partition")) << line;
    const Json& p = row["partition"];
    remote += p["remote"].get<bool>();
    exported += p["rows_exported"].get<std::size_t>();
    EXPECT_GE(p["imbalance"].get<double>(), 1.0);
    EXPECT_EQ(p["remote"].get<bool>(), p["partners"].get<std::size_t>() > 0) << line;
  }
  EXPECT_EQ(rows, 127u + 144u);
  EXPECT_GT(remote, 0u);
  EXPECT_GT(exported, 0u);

  ASSERT_EQ(run(arguments + path("p.csv")).exit_code, 0);
  std::istringstream csv(io::read_file(path("p.csv")));
  std::string header, first;
  std::getline(csv, header);
  std::getline(csv, first);
  EXPECT_TRUE(header.ends_with(",remote,partners,rows_exported,bytes_exported,max_partition_terms,imbalance"))
      << header;
  EXPECT_FALSE(first.ends_with(",,,,,")) << first;
  ASSERT_EQ(run("kicked-ising --steps 1 --theta-h 0.3 -q --trace " + path("u.csv")).exit_code, 0);
  std::istringstream plain(io::read_file(path("u.csv")));
  std::getline(plain, header);
  std::getline(plain, first);
  EXPECT_TRUE(first.ends_with(",,,,,")) << first;
}

TEST_F(Cli, ResumeAfterSigkillOrSigintGivesTheUninterruptedResult) {
  const std::string arguments = "kicked-ising --steps 3 --theta-h 0.6 --coeff 1e-5 -q";
  const Result full = run(arguments);
  ASSERT_EQ(full.exit_code, 0) << full.err;
  const Json expected = parse(full.out);
  for (const char* signal : {"SIGKILL", "SIGINT"}) {
    SCOPED_TRACE(signal);
    const std::string checkpoint = path(std::string(signal) + ".ckpt");
    const Json got = KilledAndResumed(arguments, checkpoint, signal, 450);
    EXPECT_EQ(got["observables"]["Z62"]["value"], expected["observables"]["Z62"]["value"]);  // bitwise
    EXPECT_EQ(got["final_terms"], expected["final_terms"]);
    EXPECT_EQ(got["resumed_from_layer"], std::string(signal) == "SIGKILL" ? 400 : 450);
    // A different task refuses the checkpoint.
    const Result other = run("kicked-ising --steps 3 --theta-h 0.7 --coeff 1e-5 -q --resume " + checkpoint);
    EXPECT_EQ(other.exit_code, 2);
    EXPECT_NE(other.err.find("different task"), std::string::npos) << other.err;
  }
  // Corrupted and truncated checkpoints are refused with a message.
  const std::string good = io::read_file(path("SIGINT.ckpt"));
  std::string corrupted = good;
  corrupted[corrupted.size() / 2] ^= 0x10;
  io::write_file_atomically(path("corrupt.ckpt"), corrupted);
  const Result bad = run(arguments + " --resume " + path("corrupt.ckpt"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("checksum"), std::string::npos) << bad.err;
  io::write_file_atomically(path("short.ckpt"), good.substr(0, good.size() - 9));
  const Result short_file = run(arguments + " --resume " + path("short.ckpt"));
  EXPECT_EQ(short_file.exit_code, 2);
  EXPECT_NE(short_file.err.find("truncated"), std::string::npos) << short_file.err;
}

/// A signal inside a layer stops the run there (the CPU engine polls between cosets), keeping the state
/// of the last layer boundary it holds; a signal during the last layer is an interruption, not a finished
/// run. Either way the checkpoint resumes to the uninterrupted result.
TEST_F(Cli, SignalsInsideALayerAndInTheLastLayerStopTheRun) {
  const std::string file =
      write("s.qasm",
            "OPENQASM 2.0;\ninclude \"qelib1.inc\";\nqreg q[2];\nh q[0];\ncx q[0], q[1];\n"
            "rz(0.3) q[1];\nrx(0.2) q[0];\ncx q[1], q[0];\nry(0.7) q[1];\nh q[1];\n"
            "rzz(0.4) q[0], q[1];\n");
  const std::string arguments = "run --qasm " + file + " --observable 'Z0 Z1' -q";
  const Result full = run(arguments);
  ASSERT_EQ(full.exit_code, 0) << full.err;
  const Json expected = parse(full.out);

  // Inside layer 6 (of 8), with checkpoints every 3 layers: the state after layer 3 is what remains.
  Result r =
      run(arguments + " --checkpoint " + path("mid.ckpt") + " --every 3", "PAULISTRINGS_FAULT=SIGTERM@5:mid");
  EXPECT_EQ(r.exit_code, 130) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("interrupted inside layer 6 of 8; checkpoint after layer 3 written"),
            std::string::npos)
      << r.err;
  Result resumed = run(arguments + " --resume " + path("mid.ckpt"));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(parse(resumed.out)["observables"]["observable"]["value"],
            expected["observables"]["observable"]["value"]);
  EXPECT_EQ(parse(resumed.out)["resumed_from_layer"], 3);

  // Without a checkpoint: stopped, nothing printed on stdout.
  r = run(arguments, "PAULISTRINGS_FAULT=SIGINT@2:mid");
  EXPECT_EQ(r.exit_code, 130) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("interrupted inside layer 3 of 8 (no --checkpoint given)"), std::string::npos)
      << r.err;

  // During the last layer: exit 130 with the final state saved, not results as if nothing happened.
  r = run(arguments + " --checkpoint " + path("last.ckpt"), "PAULISTRINGS_FAULT=SIGTERM@8");
  EXPECT_EQ(r.exit_code, 130) << r.err;
  EXPECT_EQ(r.out, "");
  resumed = run(arguments + " --resume " + path("last.ckpt"));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(parse(resumed.out)["observables"]["observable"]["value"],
            expected["observables"]["observable"]["value"]);
  EXPECT_EQ(parse(resumed.out)["resumed_from_layer"], 8);
}

/// A run under --memory-limit: the budget cut the sum, no layer passed the budget's terms and (outside
/// AddressSanitizer, whose shadow memory the limit does not count) the process peaked under `limit` bytes.
void ExpectUnderTheLimit(const Json& j, std::size_t limit) {
  EXPECT_GT(j["memory_budget"]["truncations"].get<std::size_t>(), 0u);
  EXPECT_GT(j["memory_budget"]["discarded_weight"].get<double>(), 0.0);
  EXPECT_LE(j["peak_terms"].get<std::size_t>(), j["memory_budget"]["max_terms"].get<std::size_t>());
#if defined(__SANITIZE_ADDRESS__)
  (void)limit;
  std::printf("[  NOTE    ] peak resident memory not compared under AddressSanitizer (shadow memory)\n");
#else
  EXPECT_LE(j["peak_resident_bytes"].get<std::size_t>(), limit);
#endif
}

/// The same run with --no-auto-truncate stops with the budget's message.
template <class Run>
void ExpectTheStrictLimitStops(const Run& run, const std::string& arguments) {
  const Result strict = run(arguments + " --no-auto-truncate");
  EXPECT_EQ(strict.exit_code, 1);
  EXPECT_NE(strict.err.find("memory budget"), std::string::npos) << strict.err;
}

TEST_F(Cli, MemoryLimitKeepsTheRunUnderItOrStops) {
  // Unbounded, this run grows to 2.1·10^6 terms (≈ 260 MB resident); the limit is 48 MiB. Under
  // AddressSanitizer the process starts much larger (its shadow memory and instrumented globals), so the
  // limit is the resident size the command reports at its start plus 112 MiB there (still well below the
  // unbounded run) and the resident-memory comparison is skipped.
  const std::string arguments = "kicked-ising --steps 5 --theta-h 0.9 --coeff 1e-7 -q";
#if defined(__SANITIZE_ADDRESS__)
  const Result probe = run(arguments + " --memory-limit 1M");
  const std::string uses = "already uses (";
  const std::size_t at = probe.err.find(uses);
  ASSERT_NE(at, std::string::npos) << probe.err;
  const std::size_t start = std::stoull(probe.err.substr(at + uses.size()));
  const std::string limit = std::to_string(start + (std::size_t{112} << 20));
#else
  const std::string limit = "48M";
#endif
  // The default thread count, and 8 threads, whose allocator arenas each keep what their thread freed.
  for (const std::string threads : {"", " --threads 8"}) {
    SCOPED_TRACE(threads);
    const Result limited = run(arguments + threads + " --memory-limit " + limit);
    ASSERT_EQ(limited.exit_code, 0) << limited.err;
    ExpectUnderTheLimit(parse(limited.out), std::size_t{48} << 20);
  }
  ExpectTheStrictLimitStops([&](const std::string& a) { return run(a); },
                            arguments + " --memory-limit " + limit);
}

/// A task of `steps` steps on `n` qubits whose layers are mostly the column engine's orbit path:
/// rotations, two-qubit depolarizing noise, amplitude damping (non-unital: the I rows join their orbits)
/// and CNOTs, with angles fixed by the qubit.
std::string LocalLayersTask(int n, int steps) {
  Json gates = Json::array();
  for (int s = 0; s < steps; ++s) {
    for (int q = 0; q < n; ++q)
      gates.push_back({{"name", "rx"}, {"qubits", {q}}, {"theta", 0.3 + 0.01 * (q % 7)}});
    for (int q = 0; q + 1 < n; ++q) {
      const char* names[] = {"rxx", "ryy", "rzz"};
      gates.push_back({{"name", names[(q + s) % 3]}, {"qubits", {q, q + 1}}, {"theta", 0.05 * (q % 9)}});
    }
    for (int q = 0; q < n; q += 3)
      gates.push_back({{"name", "depolarize2"}, {"qubits", {q, (q + 1) % n}}, {"p", 0.01}});
    for (int q = 1; q < n; q += 4)
      gates.push_back({{"name", "amplitude_damping"}, {"qubits", {q}}, {"gamma", 0.02}});
    for (int q = 2; q + 1 < n; q += 6) gates.push_back({{"name", "cnot"}, {"qubits", {q, q + 1}}});
  }
  Json task = {{"version", 1},
               {"n_qubits", n},
               {"circuit", {{"gates", gates}}},
               {"observable",
                {{"Z" + std::to_string(n / 2), 1.0},
                 {"X" + std::to_string(n / 2 - 1) + " X" + std::to_string(n / 2), 0.5}}},
               {"truncation", {{"min_abs_coeff", 1e-9}}},
               {"run", {{"direction", "heisenberg"}, {"threads", 1}, {"state", "z+"}}}};
  return task.dump();
}

TEST_F(Cli, TheColumnEngineGivesTheCpuResultAndIsRefusedWhereItCannotRun) {
  const std::string kicked = "kicked-ising --steps 2 --theta-h 0.6 --coeff 1e-5 -q";
  const Result cpu = run(kicked);
  const Result column = run(kicked + " --engine column --threads 2");
  ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
  ASSERT_EQ(column.exit_code, 0) << column.err;
  EXPECT_NEAR(value_of(parse(column.out)["observables"]["Z62"]["value"]).real(),
              value_of(parse(cpu.out)["observables"]["Z62"]["value"]).real(), 1e-12);
  EXPECT_EQ(parse(column.out)["final_terms"], parse(cpu.out)["final_terms"]);
  EXPECT_EQ(parse(column.out)["engine"], "column");
  EXPECT_EQ(parse(column.out)["threads"], 1);  // one thread, whatever --threads says
  EXPECT_EQ(parse(run(kicked + " --engine cpu").out)["engine"], "cpu");

  // A task file that names it, both directions, against the library.
  for (const char* direction : {"heisenberg", "forward"}) {
    SCOPED_TRACE(direction);
    std::string text = kEveryV1Gate;
    text.replace(text.find("\"heisenberg\""), 12, std::string("\"") + direction + "\"");
    text.replace(text.find("\"threads\": 1"), 12, "\"threads\": 1, \"engine\": \"column\"");
    const std::string task_path = write("task.json", text);
    const Result r = run("run " + task_path + " -q");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const Json j = parse(r.out);
    const Complex expected = library_values(io::load_task(task_path))[0];
    EXPECT_NEAR(value_of(j["observables"]["observable"]["value"]).real(), expected.real(), 1e-12);
    EXPECT_NEAR(value_of(j["observables"]["observable"]["value"]).imag(), expected.imag(), 1e-12);
    EXPECT_EQ(j["engine"], "column");
  }
  // The orbit path, and a QASM file.
  const std::string local = write("local.json", LocalLayersTask(12, 2));
  const Result local_cpu = run("run " + local + " -q");
  const Result local_column = run("run " + local + " -q --engine column");
  ASSERT_EQ(local_column.exit_code, 0) << local_column.err;
  EXPECT_NEAR(value_of(parse(local_column.out)["observables"]["observable"]["value"]).real(),
              value_of(parse(local_cpu.out)["observables"]["observable"]["value"]).real(), 1e-12);
  EXPECT_EQ(parse(local_column.out)["final_terms"], parse(local_cpu.out)["final_terms"]);

  // Refused, one line each, exit 2.
  auto refused = [&](const std::string& arguments, const std::string& needle) {
    SCOPED_TRACE(arguments);
    const Result r = run(arguments);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  };
  refused(kicked + " --engine bogus", "--engine: unknown engine 'bogus' (expected cpu or column)");
  refused(kicked + " --engine column --partitions 2",
          "the column engine (--engine column or run.engine) runs in one "
          "process on the host: not with 2 partitions");
  refused(kicked + " --engine column --device 0", "not with device 0");
  refused("kicked-ising --steps 2 --theta-h 0:0.5:2 -q --engine column",
          "the column engine (--engine column or run.engine)");
  std::string bad = kEveryV1Gate;
  bad.replace(bad.find("\"threads\": 1"), 12, "\"threads\": 1, \"engine\": \"gpu\"");
  refused("run " + write("bad.json", bad) + " -q", "run.engine");
}

TEST_F(Cli, TheCpuEngineStartsOnTheColumnEngineUnlessToldNot) {
  // One thread (the command's default): the phase takes the early layers, where few terms change, and
  // the result is the coset engine's bit for bit (the value printed to the last digit, the term counts).
  const std::string kicked = "kicked-ising --steps 2 --theta-h 0.6 --coeff 1e-5 -q";
  const Result phase = run(kicked);
  const Result alone = run(kicked + " --column-phase off");
  ASSERT_EQ(phase.exit_code, 0) << phase.err;
  ASSERT_EQ(alone.exit_code, 0) << alone.err;
  const Json with = parse(phase.out)["observables"]["Z62"], without = parse(alone.out)["observables"]["Z62"];
  EXPECT_GT(with["column_layers"].get<std::size_t>(), 0u);
  EXPECT_FALSE(without.contains("column_layers"));
  EXPECT_EQ(with["value"], without["value"]);
  EXPECT_EQ(with["final_terms"], without["final_terms"]);
  EXPECT_EQ(with["peak_terms"], without["peak_terms"]);
  EXPECT_EQ(parse(phase.out)["engine"], "cpu");
  const Result bad = run(kicked + " --column-phase maybe");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--column-phase: expected on or off, got 'maybe'"), std::string::npos) << bad.err;
}

TEST_F(Cli, TheColumnEngineStaysUnderTheMemoryLimit) {
  // As MemoryLimitKeepsTheRunUnderItOrStops, on one thread: the rotation path (kicked Ising, 2.1·10^6
  // terms unbounded) and the orbit path (LocalLayersTask, 2.5·10^5 terms), whose per-row scratch the
  // budget counts (docs/design.md §7.5). The limits are 32 MiB above what the process holds at its start
  // (measured by a run of one step), so the orbit path is cut under AddressSanitizer too, whose shadow
  // memory (ExpectUnderTheLimit does not compare the resident memory there) the start includes.
  const Result idle = run("kicked-ising --steps 1 --theta-h 0.3 -q");
  ASSERT_EQ(idle.exit_code, 0) << idle.err;
  const std::size_t limit =
      parse(idle.out)["peak_resident_bytes"].get<std::size_t>() + (std::size_t{32} << 20);
  const std::string local = write("local.json", LocalLayersTask(40, 12));
  const std::string kicked = "kicked-ising --steps 5 --theta-h 0.9 --coeff 1e-7 -q";
  const std::string limited_column = " --engine column --memory-limit " + std::to_string(limit);
  for (const std::string& arguments : {kicked, "run " + local + " -q"}) {
    SCOPED_TRACE(arguments);
    const Result limited = run(arguments + limited_column);
    ASSERT_EQ(limited.exit_code, 0) << limited.err;
    EXPECT_EQ(parse(limited.out)["engine"], "column");
    ExpectUnderTheLimit(parse(limited.out), limit);
  }
  ExpectTheStrictLimitStops([&](const std::string& a) { return run(a); }, kicked + limited_column);
}

TEST_F(Cli, TheColumnEngineResumesToTheUninterruptedBits) {
  // The resumed engine holds its rows in the checkpoint's order, not the uninterrupted run's: every
  // output is summed in the same order regardless (docs/design.md §7.5), so the bits agree.
  const std::string local = write("local.json", LocalLayersTask(24, 4));
  for (const std::string& arguments :
       {std::string("kicked-ising --steps 3 --theta-h 0.6 --coeff 1e-6 -q"), "run " + local + " -q"}) {
    SCOPED_TRACE(arguments);
    const std::string column = arguments + " --engine column";
    const Result full = run(column);
    ASSERT_EQ(full.exit_code, 0) << full.err;
    const Json expected = parse(full.out);
    const std::string observable = expected["observables"].begin().key();
    for (const char* signal : {"SIGKILL", "SIGINT"}) {
      SCOPED_TRACE(signal);
      const std::string checkpoint = path(std::string(signal) + ".ckpt");
      fs::remove(checkpoint);
      const Json got = KilledAndResumed(column, checkpoint, signal, 250);
      EXPECT_EQ(got["observables"][observable]["value"],
                expected["observables"][observable]["value"]);  // bitwise
      EXPECT_EQ(got["final_terms"], expected["final_terms"]);
      EXPECT_EQ(got["resumed_from_layer"], std::string(signal) == "SIGKILL" ? 200 : 250);
    }
  }
}

TEST_F(Cli, TheMemoryGuardStopsBeforeALayerWithOneLineAndTheCheckpoint) {
  // 4 MB for the run's terms (80 bytes an output term): this run's rx layers in its last step would grow
  // about 27 000 terms to 54 000 (4.1 MiB); it ends with 44 000 terms.
  const std::string arguments = "kicked-ising --steps 5 --theta-h 0.9 --coeff 1e-3 -q --threads 2";
  const Result stopped =
      run(arguments + " --checkpoint " + path("run.ckpt") + " --host-memory 4000000");
  ASSERT_EQ(stopped.exit_code, 1) << stopped.err;
  EXPECT_EQ(std::count(stopped.err.begin(), stopped.err.end(), '\n'), 1) << stopped.err;
  for (const char* part : {"memory guard: layer ", " terms, about ", "the memory guard's allowance",
                           "checkpoint ", " written after layer ", "--memory-limit", "--coeff"}) {
    EXPECT_NE(stopped.err.find(part), std::string::npos) << "\"" << part << "\" not in: " << stopped.err;
  }
  const std::size_t at = stopped.err.find(" written after layer ") + 21;
  const std::size_t layer = std::stoul(stopped.err.substr(at));
  EXPECT_EQ(io::load_checkpoint(path("run.ckpt")).layers_done, layer);
  // The checkpoint goes on, within memory, under --memory-limit (or once there is more memory). 512M:
  // above what the process holds at its start under AddressSanitizer (≈ 120 MB), which a limit must be.
  const Result resumed = run(arguments + " --resume " + path("run.ckpt") + " --memory-limit 512M");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(parse(resumed.out)["resumed_from_layer"].get<std::size_t>(), layer);
  // Off, the run is not stopped.
  EXPECT_EQ(run(arguments + " --no-memory-guard").exit_code, 0);
  // The allowance is a byte count above zero, and means nothing without the guard.
  for (const char* bad : {" --host-memory 0", " --host-memory 4X", " --host-memory -5",
                          " --host-memory 4000000 --no-memory-guard"}) {
    const Result refused = run(arguments + bad);
    EXPECT_EQ(refused.exit_code, 2) << bad << ": " << refused.err;
    EXPECT_NE(refused.err.find("--host-memory"), std::string::npos) << bad << ": " << refused.err;
  }
}

TEST_F(Cli, TheMemoryGuardCountsTheColumnEnginesBytesPerTerm) {
  // The last rx layers grow 4.4·10^4 terms to 8.8·10^4 at most: about 6.7 MiB at the CPU engine's 80
  // bytes an output term, 25 MiB at the column engine's 300 (W = 2, real). With 12 MiB allowed the CPU
  // engine finishes and the column engine stops there, writing its checkpoint, which resumes to its result.
  const std::string arguments = "kicked-ising --steps 5 --theta-h 0.9 --coeff 1e-3 -q --host-memory 12M";
  const Result cpu = run(arguments);
  ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
  const Result stopped = run(arguments + " --engine column --checkpoint " + path("run.ckpt"));
  ASSERT_EQ(stopped.exit_code, 1) << stopped.err;
  EXPECT_NE(stopped.err.find("memory guard: layer "), std::string::npos) << stopped.err;
  const Result resumed =
      run("kicked-ising --steps 5 --theta-h 0.9 --coeff 1e-3 -q --engine column --no-memory-guard --resume " +
          path("run.ckpt"));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NEAR(value_of(parse(resumed.out)["observables"]["Z62"]["value"]).real(),
              value_of(parse(cpu.out)["observables"]["Z62"]["value"]).real(), 1e-12);
  EXPECT_EQ(parse(resumed.out)["final_terms"], parse(cpu.out)["final_terms"]);
}

TEST_F(Cli, AnAddressSpaceLimitEndsInTheMemoryErrorNeverASignal) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP()
      << "AddressSanitizer reserves terabytes of address space: no run fits under an address-space limit";
#else
  if (std::system("prlimit --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "no prlimit (util-linux)";
  // Unbounded this run passes 2·10^6 terms within its first five steps and needs gigabytes after; the
  // process starts at a few hundred megabytes of address space (shared libraries), so 600 and 450 MB
  // are passed mid-run wherever it starts.
  const std::string arguments = " kicked-ising --steps 6 --theta-h 0.9 --coeff 1e-7 -q --threads 2";
  const auto one_line = [](const std::string& text) {
    return std::count(text.begin(), text.end(), '\n') == 1;
  };
  // The guard sees the limit and stops before a layer that would not fit (or, should the untracked
  // address space — thread stacks, allocator arenas — outgrow its margin, an allocation is refused).
  const Result stopped = run(arguments, "prlimit --as=" + std::to_string(std::size_t{600} << 20));
  ASSERT_EQ(stopped.exit_code, 1) << stopped.err;
  EXPECT_TRUE(one_line(stopped.err)) << stopped.err;
  EXPECT_TRUE(stopped.err.find("memory guard: layer ") != std::string::npos ||
              stopped.err.find("out of host memory") != std::string::npos)
      << stopped.err;
  // Without the guard an allocation is refused inside a layer: the same error, not a signal.
  const Result refused =
      run(arguments + " --no-memory-guard", "prlimit --as=" + std::to_string(std::size_t{450} << 20));
  ASSERT_EQ(refused.exit_code, 1) << refused.err;
  EXPECT_TRUE(one_line(refused.err)) << refused.err;
  EXPECT_NE(refused.err.find("out of host memory: an allocation was refused"), std::string::npos)
      << refused.err;
#endif
}

TEST_F(Cli, TheCommandChoosesPassiveOpenMpWaitingUnlessTheUserDid) {
  const std::string arguments = "kicked-ising --steps 1 --theta-h 0.25 -q --threads 2";
  const Result chosen = run(arguments, "env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT");
  ASSERT_EQ(chosen.exit_code, 0) << chosen.err;
  EXPECT_EQ(parse(chosen.out)["openmp_wait_policy"], "passive");
  const Result user = run(arguments, "OMP_WAIT_POLICY=active");
  ASSERT_EQ(user.exit_code, 0) << user.err;
  EXPECT_EQ(parse(user.out)["openmp_wait_policy"], "active");
  const Result spins = run(arguments, "env -u OMP_WAIT_POLICY GOMP_SPINCOUNT=1000");
  ASSERT_EQ(spins.exit_code, 0) << spins.err;
  EXPECT_EQ(parse(spins.out)["openmp_wait_policy"], "GOMP_SPINCOUNT=1000");
}

// Under OMP_PROC_BIND libgomp binds the main thread to one place as it loads: neither the re-executed
// image (wait_policy.h) nor --threads 0 may take that one place for every CPU the command was given.
TEST_F(Cli, BoundOpenMpThreadsKeepEveryCpuTheCommandWasGiven) {
  const int cpus = available_cpus();
  if (cpus < 2) GTEST_SKIP() << "one CPU: nothing to lose";
  const std::string arguments = "kicked-ising --steps 1 --theta-h 0.25 -q --threads 0";
  for (const std::string bind : {"OMP_PROC_BIND=close OMP_PLACES=cores", "OMP_PROC_BIND=true"}) {
    for (const std::string policy : {"env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT", "OMP_WAIT_POLICY=passive"}) {
      SCOPED_TRACE(policy + " " + bind);
      const Result r = run(arguments, policy + " " + bind);
      ASSERT_EQ(r.exit_code, 0) << r.err;
      EXPECT_EQ(parse(r.out)["threads"], cpus);
      EXPECT_EQ(parse(r.out)["openmp_wait_policy"], "passive");
    }
  }
}

// ---- sweeps (docs/cli.md, "Sweeps") ----------------------------------------------------------------

constexpr const char* kSweepTask = R"({"version": 1, "n_qubits": 4,
  "sweep": {"th": [0.1, -0.7, 1.3], "p": [0.0, 0.02, 0.05]},
  "circuit": {"gates": [
    {"name": "h", "qubits": [0]}, {"name": "rx", "qubits": [1], "theta": "th"},
    {"name": "cnot", "qubits": [0, 2]}, {"name": "rzz", "qubits": [1, 2], "theta": 0.4},
    {"name": "depolarize", "qubits": [0, 2], "p": "p"}, {"name": "ry", "qubits": [3], "theta": "th"},
    {"name": "amplitude_damping", "qubits": [1], "gamma": "p"}, {"name": "cz", "qubits": [2, 3]},
    {"name": "pauli_rotation", "pauli": "XYZ", "qubits": [0, 1, 3], "theta": "th"}]},
  "observables": {"zz": {"Z0 Z2": 1.0, "X1": 0.5}, "c": {"Y0 Z3": [0.5, 0.25], "Z1": 1.0, "IIII": [0.0, 0.25]}},
  "run": {"direction": "heisenberg", "threads": 2, "state": "0+r1"}
})";

/// The value lists of one observable of a sweep's results.
std::vector<Complex> values_of(const Json& j) {
  std::vector<Complex> values;
  for (const Json& v : j) values.push_back(value_of(v));
  return values;
}

TEST_F(Cli, ASweepTaskGivesEveryColumnItsSeparateRunsValue) {
  const std::string task_path = write("sweep.json", kSweepTask);
  const Result r = run("run " + task_path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = parse(r.out);
  EXPECT_EQ(j["sweep"], parse(R"({"th": [0.1, -0.7, 1.3], "p": [0.0, 0.02, 0.05]})"));
  EXPECT_EQ(j["columns"], 3);
  EXPECT_EQ(j["threads"], 2);
  // Each column against the same task without the sweep, run by the command on its own.
  const io::Task task = io::load_task(task_path);
  for (std::size_t k = 0; k < 3; ++k) {
    SCOPED_TRACE("column " + std::to_string(k));
    io::Task single = task;
    single.circuit = task.sweep_circuits[k];
    single.sweep = {};
    single.sweep_circuits.clear();
    single.sweep_bindings.clear();
    const std::string single_path = write("single.json", io::task_to_json(single));
    const Result s = run("run " + single_path + " -q");
    ASSERT_EQ(s.exit_code, 0) << s.err;
    for (const char* name : {"zz", "c"}) {
      const Complex expected = value_of(parse(s.out)["observables"][name]["value"]);
      const std::vector<Complex> values = values_of(j["observables"][name]["values"]);
      ASSERT_EQ(values.size(), 3u);
      EXPECT_NEAR(values[k].real(), expected.real(), 1e-12) << name;
      EXPECT_NEAR(values[k].imag(), expected.imag(), 1e-12) << name;
    }
  }
  // The observable "c" is complex: its values are [re, im] pairs, as "value" is.
  EXPECT_TRUE(j["observables"]["c"]["values"][1].is_array()) << j["observables"]["c"];
  EXPECT_EQ(j["observables"]["zz"]["discarded_weight"].size(), 3u);
  EXPECT_EQ(j["observables"]["zz"]["column_groups"], 1);  // a small sweep: one group
  EXPECT_EQ(j["observables"]["zz"]["column_splits"], 0);
  // The text lines: one per column, its parameters and every observable's value.
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 3) << r.err;
  EXPECT_NE(r.err.find("th=-0.7 p=0.02: <zz>="), std::string::npos) << r.err;
  EXPECT_EQ(run("run " + task_path + " -q").err, "");
  // A memory limit is a term budget for the sweep as for an ordinary run.
  const Result limited = run("run " + task_path + " -q --memory-limit 1G");
  ASSERT_EQ(limited.exit_code, 0) << limited.err;
  EXPECT_GT(parse(limited.out)["memory_budget"]["max_terms"].get<std::size_t>(), 0u);
  EXPECT_EQ(parse(limited.out)["observables"]["zz"]["values"], j["observables"]["zz"]["values"]);
}

TEST_F(Cli, ASweepOverAQasmFilesInputsMatchesRunsWithEachParam) {
  const std::string qasm = write("c.qasm", R"(OPENQASM 3;
include "stdgates.inc";
input float[64] t;
qubit[3] q;
h q[0];
cx q[0], q[1];
rz(2 * t) q[1];
crx(t + 0.25) q[1], q[2];
)");
  const std::string task_path = write("t.json", R"({"version": 1, "n_qubits": 3, "sweep": {"th": [0.3, -1.1]},
    "circuit": {"qasm_file": "c.qasm", "params": {"t": "th"}},
    "observable": {"X0 Z1": 1.0, "Zq[2]": 0.5}, "run": {"direction": "heisenberg"}})");
  const Result r = run("run " + task_path + " -q");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<Complex> values = values_of(parse(r.out)["observables"]["observable"]["values"]);
  ASSERT_EQ(values.size(), 2u);
  for (const auto& [k, t] : {std::pair<std::size_t, std::string>{0, "0.3"}, {1, "-1.1"}}) {
    const Result single =
        run("run --qasm " + qasm + " --param t=" + t + " --observable 'X0 Z1' --observable 0.5*Z2 -q");
    ASSERT_EQ(single.exit_code, 0) << single.err;
    EXPECT_NEAR(values[k].real(), value_of(parse(single.out)["observables"]["observable"]["value"]).real(),
                1e-12);
  }
}

TEST_F(Cli, WhatASweepCannotHonourIsRefusedWithOneLine) {
  const std::string task_path = write("sweep.json", kSweepTask);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--device gpu", "device gpu"},
      {"--device 0", "device 0"},
      {"--partitions 2", "2 partitions"},
      {"--partition-rows seeded:3", "partition rows"},
  };
  for (const auto& [flags, expected] : cases) {
    SCOPED_TRACE(flags);
    const Result r = run("run " + task_path + " -q " + flags);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err.find("paulistrings: " + expected), 0u) << r.err;
    EXPECT_NE(r.err.find(": a sweep runs in one process on the CPU\n"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.out, "");
  }
  const Result every = run("run " + task_path + " -q --every 2");
  EXPECT_EQ(every.exit_code, 2) << every.err;
  EXPECT_EQ(every.err, "paulistrings: --every needs --checkpoint FILE\n");
  // SIGINT stops a sweep after the layer: exit 130 and no results.
  const Result stopped = run("run " + task_path + " -q", "PAULISTRINGS_FAULT=SIGINT@2");
  EXPECT_EQ(stopped.exit_code, 130) << stopped.err;
  EXPECT_NE(stopped.err.find("interrupted after layer 2 of 10 (no --checkpoint given)"), std::string::npos)
      << stopped.err;
  EXPECT_EQ(stopped.out, "");
  // Malformed sweeps in the file: one located line, exit 2.
  std::string text = kSweepTask;
  text.replace(text.find(R"("theta": "th"})"), 14, R"("theta": "tx"})");
  const Result unknown = run("run " + write("unknown.json", text) + " -q");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("circuit.gates[1].theta: unknown sweep parameter \"tx\""), std::string::npos)
      << unknown.err;
  text = kSweepTask;
  text.replace(text.find(", 0.05]"), 7, "]");
  const Result lengths = run("run " + write("lengths.json", text) + " -q");
  EXPECT_EQ(lengths.exit_code, 2);
  EXPECT_NE(lengths.err.find("sweep.p: has 2 values but \"th\" has 3"), std::string::npos) << lengths.err;
}

TEST_F(Cli, KickedIsingSweepsThetaHInOneRunLikeSingleAngles) {
  const Result r = run("kicked-ising --steps 2 --theta-h 0:pi/2:3 -q --write-task " + path("ki.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = parse(r.out);
  ASSERT_EQ(j["sweep"]["theta_h"].size(), 3u);
  EXPECT_EQ(j["sweep"]["theta_h"][0].get<double>(), 0.0);
  EXPECT_EQ(j["sweep"]["theta_h"][1].get<double>(), std::numbers::pi / 4);
  EXPECT_EQ(j["sweep"]["theta_h"][2].get<double>(), std::numbers::pi / 2);
  const std::vector<Complex> values = values_of(j["observables"]["Z62"]["values"]);
  ASSERT_EQ(values.size(), 3u);
  for (const char* theta : {"0", "pi/4", "pi/2"}) {
    SCOPED_TRACE(theta);
    const std::size_t k = std::string(theta) == "0" ? 0 : std::string(theta) == "pi/4" ? 1 : 2;
    const Result single = run(std::string("kicked-ising --steps 2 -q --theta-h ") + theta);
    ASSERT_EQ(single.exit_code, 0) << single.err;
    EXPECT_NEAR(values[k].real(), value_of(parse(single.out)["observables"]["Z62"]["value"]).real(), 1e-12);
  }
  // The task it wrote names the parameter in the rx gates and runs to the same values.
  const std::string written = io::read_file(path("ki.json"));
  EXPECT_NE(written.find(R"({"name":"rx","qubits":[0],"theta":"theta_h"})"), std::string::npos);
  const Result again = run("run " + path("ki.json") + " -q");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(parse(again.out)["observables"]["Z62"]["values"], j["observables"]["Z62"]["values"]);
  // START:STOP:K is read strictly.
  for (const std::string bad : {"0:1:2.5", "0:1:0", "0:1", "0:1:3:4", "0:x:3", "0:1:-2"}) {
    SCOPED_TRACE(bad);
    const Result refused = run("kicked-ising --steps 1 -q --theta-h " + bad);
    EXPECT_EQ(refused.exit_code, 2) << refused.err;
    EXPECT_NE(refused.err.find("'" + bad + "'"), std::string::npos) << refused.err;
    EXPECT_EQ(std::count(refused.err.begin(), refused.err.end(), '\n'), 1) << refused.err;
  }
}

// ---- gradients (docs/cli.md, "Sweeps") -------------------------------------------------------------

/// A sweep task over "th" (three rotations) and "p" (depolarize, and pauli_channel's px and pz together),
/// `members` added at the top level ("gradient").
std::string GradientTask(const std::string& th, const std::string& p, const std::string& members = "") {
  return R"({"version": 1, "n_qubits": 4, "sweep": {"th": )" + th + R"(, "p": )" + p + "}, " + members +
         R"("circuit": {"gates": [
    {"name": "h", "qubits": [0]}, {"name": "rx", "qubits": [1], "theta": "th"},
    {"name": "cnot", "qubits": [0, 2]}, {"name": "rzz", "qubits": [1, 2], "theta": 0.4},
    {"name": "depolarize", "qubits": [0, 2], "p": "p"}, {"name": "ry", "qubits": [3], "theta": "th"},
    {"name": "pauli_channel", "qubits": [1], "px": "p", "py": 0.01, "pz": "p"}, {"name": "cz", "qubits": [2, 3]},
    {"name": "pauli_rotation", "pauli": "XYZ", "qubits": [0, 1, 3], "theta": "th"},
    {"name": "depolarize2", "qubits": [1, 3], "p": 0.02}]},
  "observables": {"zz": {"Z0 Z2": 1.0, "X1": 0.5, "Y3": 0.25}, "c": {"Y0 Z3": [0.5, 0.25], "Z1 X3": 1.0}},
  "run": {"direction": "heisenberg", "threads": 2, "state": "0+r1"}})";
}

TEST_F(Cli, GradientsMatchCentralFiniteDifferencesOfTwoSweepRuns) {
  const std::string th = "[0.1, -0.7, 1.3]", p = "[0.01, 0.02, 0.05]";
  const Result r = run("run " + write("g.json", GradientTask(th, p, R"("gradient": ["th", "p"], )")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = parse(r.out);
  // Asking for gradients changes no value.
  const Result plain = run("run " + write("plain.json", GradientTask(th, p)) + " -q");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const double h = 1e-5;
  const std::string th_minus = "[0.09999, -0.70001, 1.29999]", th_plus = "[0.10001, -0.69999, 1.30001]";
  const std::string p_minus = "[0.00999, 0.01999, 0.04999]", p_plus = "[0.01001, 0.02001, 0.05001]";
  for (const auto& [name, minus, plus] : {std::tuple<std::string, std::string, std::string>{
                                              "th", GradientTask(th_minus, p), GradientTask(th_plus, p)},
                                          {"p", GradientTask(th, p_minus), GradientTask(th, p_plus)}}) {
    SCOPED_TRACE(name);
    const Result down = run("run " + write("minus.json", minus) + " -q");
    const Result up = run("run " + write("plus.json", plus) + " -q");
    ASSERT_EQ(down.exit_code, 0) << down.err;
    ASSERT_EQ(up.exit_code, 0) << up.err;
    for (const char* observable : {"zz", "c"}) {
      SCOPED_TRACE(observable);
      const Json& o = j["observables"][observable];
      EXPECT_EQ(o["values"], parse(plain.out)["observables"][observable]["values"]);
      const std::vector<Complex> gradient = values_of(o["gradients"][name]);
      const std::vector<Complex> below = values_of(parse(down.out)["observables"][observable]["values"]);
      const std::vector<Complex> above = values_of(parse(up.out)["observables"][observable]["values"]);
      ASSERT_EQ(gradient.size(), 3u);
      for (std::size_t k = 0; k < 3; ++k) {
        const Complex difference = (above[k] - below[k]) / (2 * h);
        EXPECT_NEAR(gradient[k].real(), difference.real(), 1e-6) << "column " << k;
        EXPECT_NEAR(gradient[k].imag(), difference.imag(), 1e-6) << "column " << k;
      }
      EXPECT_EQ(o["gradient_discarded_weight"][name].size(), 3u);
      EXPECT_EQ(o["discarded_weight"].size(), 3u);
    }
  }
  EXPECT_GT(std::abs(values_of(j["observables"]["zz"]["gradients"]["th"])[1]), 1e-3);  // not trivially zero
  // The text lines add d<O>/dname per observable and parameter.
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 3) << r.err;
  EXPECT_NE(r.err.find("th=-0.7 p=0.02: <zz>="), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" d<zz>/dth="), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" d<c>/dp="), std::string::npos) << r.err;
}

TEST_F(Cli, AnAngleInOneRotationHasTheParameterShiftAsGradient) {
  // "a" enters one rotation: d<O>/da = (<O>(a + pi/2) - <O>(a - pi/2)) / 2 exactly.
  const auto task = [](const std::string& a, const std::string& members) {
    return R"({"version": 1, "n_qubits": 3, "sweep": {"a": )" + a + "}, " + members +
           R"("circuit": {"gates": [
      {"name": "h", "qubits": [0]}, {"name": "cnot", "qubits": [0, 1]}, {"name": "ry", "qubits": [2], "theta": 0.3},
      {"name": "rzz", "qubits": [1, 2], "theta": "a"}, {"name": "depolarize", "qubits": [1], "p": 0.05},
      {"name": "rx", "qubits": [1], "theta": 0.8}]},
      "observable": {"X0 Y1 Z2": 1.0, "Y1 X2": 0.5}, "run": {"direction": "heisenberg"}})";
  };
  const double a[2] = {0.4, -2.1};
  const Result r = run("run -q " + write("g.json", task("[0.4, -2.1]", R"("gradient": ["a"], )")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json shifted = Json::array();
  for (double v : a) shifted.insert(shifted.end(), {v + std::numbers::pi / 2, v - std::numbers::pi / 2});
  const Result s = run("run -q " + write("s.json", task(shifted.dump(), "")));
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const std::vector<Complex> gradient =
      values_of(parse(r.out)["observables"]["observable"]["gradients"]["a"]);
  const std::vector<Complex> values = values_of(parse(s.out)["observables"]["observable"]["values"]);
  ASSERT_EQ(gradient.size(), 2u);
  for (std::size_t k = 0; k < 2; ++k) {
    EXPECT_NEAR(gradient[k].real(), (values[2 * k] - values[2 * k + 1]).real() / 2, 1e-12) << k;
    EXPECT_GT(std::abs(gradient[k]), 1e-3) << k;
  }
}

TEST_F(Cli, ADepolarizingStrengthsGradientIsTheExactSlope) {
  // depolarize(p) scales X by 1 - 4p/3 (docs/design.md §2.6); it acts last, so <X0>(p) = (1 - 4p/3) c and
  // d<X0>/dp = -4/3 c = -4/3 <X0>(p) / (1 - 4p/3).
  const Result r = run("run -q " + write("g.json", R"({"version": 1, "n_qubits": 2,
    "sweep": {"p": [0.0, 0.1, 0.7]}, "gradient": ["p"], "circuit": {"gates": [
      {"name": "ry", "qubits": [0], "theta": 0.7}, {"name": "rz", "qubits": [0], "theta": 0.3},
      {"name": "rx", "qubits": [1], "theta": 0.4}, {"name": "depolarize", "qubits": [0], "p": "p"}]},
    "observable": {"X0": 1.0}, "run": {"direction": "heisenberg"}})"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = parse(r.out);
  const Json& o = j["observables"]["observable"];
  const std::vector<Complex> values = values_of(o["values"]), gradient = values_of(o["gradients"]["p"]);
  const double p[3] = {0.0, 0.1, 0.7};
  ASSERT_EQ(gradient.size(), 3u);
  EXPECT_GT(std::abs(values[0]), 0.1);
  for (std::size_t k = 0; k < 3; ++k)
    EXPECT_NEAR(gradient[k].real(), -4.0 / 3.0 * values[k].real() / (1 - 4 * p[k] / 3), 1e-12) << k;
}

TEST_F(Cli, WhatAGradientCannotTakeIsRefusedWithOneLine) {
  // amplitude_damping's gamma names "p" in kSweepTask: its transfer is not affine in gamma.
  std::string text = kSweepTask;
  text.insert(text.find(R"("circuit")"), R"("gradient": ["p"], )");
  const Result gamma = run("run -q " + write("gamma.json", text));
  EXPECT_EQ(gamma.exit_code, 2) << gamma.err;
  EXPECT_NE(gamma.err.find("gradient[0]: sweep parameter \"p\" sets amplitude_damping's gamma"),
            std::string::npos)
      << gamma.err;
  EXPECT_EQ(std::count(gamma.err.begin(), gamma.err.end(), '\n'), 1) << gamma.err;
  EXPECT_EQ(gamma.out, "");
  text = kSweepTask;
  text.insert(text.find(R"("circuit")"), R"("gradient": ["th", "q"], )");
  const Result unknown = run("run -q " + write("unknown.json", text));
  EXPECT_EQ(unknown.exit_code, 2) << unknown.err;
  EXPECT_NE(unknown.err.find("gradient[1]: unknown sweep parameter \"q\""), std::string::npos) << unknown.err;
  // kicked-ising has one parameter.
  const Result other = run("kicked-ising --steps 1 -q --theta-h 0:1:2 --gradient theta");
  EXPECT_EQ(other.exit_code, 2) << other.err;
  EXPECT_EQ(other.err, "paulistrings: --gradient 'theta': kicked-ising has one parameter, theta_h\n");
}

TEST_F(Cli, KickedIsingGradientMatchesFiniteDifferencesAndIsWrittenToTheTask) {
  const std::string common = "kicked-ising --steps 2 -q --coeff 0 --theta-h ";
  const Result r = run(common + "0.3:0.9:3 --gradient theta_h --write-task " + path("ki.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = parse(r.out);
  const std::vector<Complex> gradient = values_of(j["observables"]["Z62"]["gradients"]["theta_h"]);
  ASSERT_EQ(gradient.size(), 3u);
  const Result down = run(common + "0.29999:0.89999:3");
  const Result up = run(common + "0.30001:0.90001:3");
  ASSERT_EQ(down.exit_code, 0) << down.err;
  ASSERT_EQ(up.exit_code, 0) << up.err;
  const std::vector<Complex> below = values_of(parse(down.out)["observables"]["Z62"]["values"]);
  const std::vector<Complex> above = values_of(parse(up.out)["observables"]["Z62"]["values"]);
  for (std::size_t k = 0; k < 3; ++k)
    EXPECT_NEAR(gradient[k].real(), (above[k] - below[k]).real() / 2e-5, 1e-6) << k;
  // The task written asks for the gradient too, and runs to the same numbers.
  const std::string written = io::read_file(path("ki.json"));
  EXPECT_NE(written.find(R"("gradient": ["theta_h"])"), std::string::npos) << written;
  const Result again = run("run " + path("ki.json") + " -q");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(parse(again.out)["observables"]["Z62"]["gradients"], j["observables"]["Z62"]["gradients"]);
  // Under truncation the values are those of the sweep without the gradient (truncation decides on the
  // values alone); the derivative columns report what they lost.
  const std::string cut_run = "kicked-ising --steps 3 -q --coeff 0.2 --theta-h 0.3:0.9:3";
  const Result cut = run(cut_run + " --gradient theta_h");
  const Result cut_plain = run(cut_run);
  ASSERT_EQ(cut.exit_code, 0) << cut.err;
  ASSERT_EQ(cut_plain.exit_code, 0) << cut_plain.err;
  const Json cut_z62 = parse(cut.out)["observables"]["Z62"];
  EXPECT_EQ(cut_z62["values"], parse(cut_plain.out)["observables"]["Z62"]["values"]);
  EXPECT_EQ(cut_z62["discarded_weight"], parse(cut_plain.out)["observables"]["Z62"]["discarded_weight"]);
  EXPECT_GT(cut_z62["discarded_weight"][1].get<double>(), 0.0);
  ASSERT_EQ(cut_z62["gradient_discarded_weight"]["theta_h"].size(), 3u);
  EXPECT_GT(cut_z62["gradient_discarded_weight"]["theta_h"][1].get<double>(), 0.0);
  // One angle with --gradient: a sweep of one column.
  const Result single = run(common + "0.9 --gradient theta_h");
  ASSERT_EQ(single.exit_code, 0) << single.err;
  EXPECT_EQ(parse(single.out)["columns"], 1);
  EXPECT_NEAR(values_of(parse(single.out)["observables"]["Z62"]["gradients"]["theta_h"])[0].real(),
              gradient[2].real(), 1e-12);
}

// ---- sweep checkpoints (docs/cli.md, "Sweeps") -----------------------------------------------------

TEST_F(Cli, ASweepResumedAfterSigkillOrSigintGivesTheUninterruptedValuesAndGradients) {
  const std::string arguments =
      "kicked-ising --steps 3 --theta-h 0.3:0.9:3 --gradient theta_h --coeff 1e-4 -q";
  const Result full = run(arguments);
  ASSERT_EQ(full.exit_code, 0) << full.err;
  const Json expected = parse(full.out)["observables"]["Z62"];
  for (const char* signal : {"SIGKILL", "SIGINT"}) {
    SCOPED_TRACE(signal);
    const std::string checkpoint = path(std::string(signal) + ".ckpt");
    const Result killed = run(arguments + " --checkpoint " + checkpoint + " --every 100",
                              std::string("PAULISTRINGS_FAULT=") + signal + "@450");
    if (std::string(signal) == "SIGINT") {
      EXPECT_EQ(killed.exit_code, 130);
      EXPECT_EQ(killed.out, "");
      EXPECT_NE(killed.err.find("interrupted after layer 450 of 813; checkpoint after layer 450 written to " +
                                checkpoint + " (continue with --resume " + checkpoint + ")"),
                std::string::npos)
          << killed.err;
    } else {
      EXPECT_NE(killed.exit_code, 0);
    }
    const Result resumed = run(arguments + " --resume " + checkpoint);
    ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
    const Json got = parse(resumed.out);
    EXPECT_EQ(got["observables"]["Z62"]["values"], expected["values"]);  // bitwise
    EXPECT_EQ(got["observables"]["Z62"]["gradients"], expected["gradients"]);
    EXPECT_EQ(got["final_terms"], parse(full.out)["final_terms"]);
    EXPECT_EQ(got["resumed_from_layer"], std::string(signal) == "SIGKILL" ? 400 : 450);
  }
  // Another sweep refuses the checkpoint with one line: other values, no gradient, one angle.
  const std::string checkpoint = path("SIGINT.ckpt");
  const std::vector<std::pair<std::string, std::string>> others = {
      {"kicked-ising --steps 3 --theta-h 0.3:0.8:3 --gradient theta_h --coeff 1e-4 -q",
       "belongs to a different sweep"},
      {"kicked-ising --steps 3 --theta-h 0.3:0.9:3 --coeff 1e-4 -q",
       "holds 6 coefficient columns a term but this sweep has 3"},
      {"kicked-ising --steps 3 --theta-h 0.3:0.9:3 --gradient theta_h --coeff 1e-3 -q",
       "belongs to a different sweep"},
      {"kicked-ising --steps 3 --theta-h 0.3 --coeff 1e-4 -q",
       "format version 2 holds several coefficient columns"},
  };
  for (const auto& [other, message] : others) {
    SCOPED_TRACE(other);
    const Result refused = run(other + " --resume " + checkpoint);
    EXPECT_EQ(refused.exit_code, 2);
    EXPECT_NE(refused.err.find(message), std::string::npos) << refused.err;
    EXPECT_EQ(std::count(refused.err.begin(), refused.err.end(), '\n'), 1) << refused.err;
    EXPECT_EQ(refused.out, "");
  }
  // A damaged checkpoint: one line naming the check.
  const std::string good = io::read_file(checkpoint);
  io::write_file_atomically(path("short.ckpt"), good.substr(0, good.size() - 9));
  const Result short_file = run(arguments + " --resume " + path("short.ckpt"));
  EXPECT_EQ(short_file.exit_code, 2);
  EXPECT_NE(short_file.err.find("truncated or corrupted"), std::string::npos) << short_file.err;
  const Result missing = run(arguments + " --resume " + path("none.ckpt"));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("none.ckpt"), std::string::npos) << missing.err;
  // The memory guard stops a sweep before a layer, with its checkpoint (exit 1, one line); resumed, the
  // uninterrupted bits.
  const std::string small = "kicked-ising --steps 4 --theta-h 0.3:0.9:3 --gradient theta_h --coeff 1e-6 -q";
  const Result small_full = run(small);
  ASSERT_EQ(small_full.exit_code, 0) << small_full.err;
  const Result guarded = run(small + " --host-memory 200000 --checkpoint " + path("guard.ckpt"));
  EXPECT_EQ(guarded.exit_code, 1) << guarded.err;
  EXPECT_EQ(std::count(guarded.err.begin(), guarded.err.end(), '\n'), 1) << guarded.err;
  const std::size_t at = guarded.err.find(" written after layer ");
  ASSERT_NE(at, std::string::npos) << guarded.err;
  const Result after = run(small + " --resume " + path("guard.ckpt") + " --no-memory-guard");
  ASSERT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(parse(after.out)["observables"], parse(small_full.out)["observables"]);
  EXPECT_EQ(parse(after.out)["resumed_from_layer"].get<std::size_t>(),
            std::stoul(guarded.err.substr(at + 21)));
}

TEST_F(Cli, ASplitSweepsCheckpointHoldsEveryGroupAndResumesToTheUninterruptedValues) {
  // θh from 0 to π/2: the columns diverge and the sweep splits (docs/design.md §7.8) before layer 1300.
  const std::string arguments =
      "kicked-ising --steps 5 --theta-h 0:1.5707963267948966:6 --coeff 2.44140625e-4 -q";
  const Result full = run(arguments);
  ASSERT_EQ(full.exit_code, 0) << full.err;
  const Json expected = parse(full.out)["observables"]["Z62"];
  ASSERT_GT(expected["column_groups"].get<int>(), 1);
  const std::string checkpoint = path("split.ckpt");
  const Result stopped =
      run(arguments + " --checkpoint " + checkpoint + " --every 1000", "PAULISTRINGS_FAULT=SIGINT@1300");
  EXPECT_EQ(stopped.exit_code, 130) << stopped.err;
  const std::string bytes = io::read_file(checkpoint);
  ASSERT_GE(bytes.size(), 24u);
  EXPECT_EQ(bytes[8], 3) << "a split sweep's checkpoint is format version 3";
  const Result resumed = run(arguments + " --resume " + checkpoint);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  const Json got = parse(resumed.out);
  EXPECT_EQ(got["resumed_from_layer"], 1300);
  EXPECT_EQ(got["observables"]["Z62"]["values"], expected["values"]);  // bitwise
  EXPECT_EQ(got["observables"]["Z62"]["column_groups"], expected["column_groups"]);
  EXPECT_EQ(got["final_terms"], parse(full.out)["final_terms"]);
  // An ordinary run refuses it, naming what it is.
  const Result refused =
      run("kicked-ising --steps 5 --theta-h 0.5 --coeff 2.44140625e-4 -q --resume " + checkpoint);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("format version 3 holds every column group of a split sweep"), std::string::npos)
      << refused.err;
}

TEST_F(Cli, ASweepTaskResumesPerObservableAndASignalInTheLastLayerStopsIt) {
  const std::string task_path = write("sweep.json", kSweepTask);
  const std::string arguments = "run " + task_path + " -q";
  const Result full = run(arguments);
  ASSERT_EQ(full.exit_code, 0) << full.err;
  const Json expected = parse(full.out)["observables"];
  // Two observables ("c", then "zz"): a signal in c's layer 5 leaves its checkpoint after layer 5;
  // resuming continues "c" and runs "zz".
  const std::string checkpoint = path("t.ckpt");
  Result r = run(arguments + " --checkpoint " + checkpoint + " --every 2", "PAULISTRINGS_FAULT=SIGTERM@5");
  EXPECT_EQ(r.exit_code, 130) << r.err;
  EXPECT_NE(r.err.find("interrupted after layer 5 of 10; checkpoint after layer 5 written"),
            std::string::npos)
      << r.err;
  Result resumed = run(arguments + " --resume " + checkpoint);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(parse(resumed.out)["observables"]["c"]["values"], expected["c"]["values"]);
  EXPECT_EQ(parse(resumed.out)["observables"]["zz"]["values"], expected["zz"]["values"]);
  EXPECT_EQ(parse(resumed.out)["resumed_from_layer"], 5);
  // During the last layer: exit 130 with the final state saved; resumed, the results.
  r = run(arguments + " --checkpoint " + path("last.ckpt"), "PAULISTRINGS_FAULT=SIGINT@10");
  EXPECT_EQ(r.exit_code, 130) << r.err;
  EXPECT_EQ(r.out, "");
  resumed = run(arguments + " --resume " + path("last.ckpt"));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(parse(resumed.out)["observables"]["c"]["values"], expected["c"]["values"]);
  EXPECT_EQ(parse(resumed.out)["resumed_from_layer"], 10);
  // Another observable: refused.
  std::string text = kSweepTask;
  text.replace(text.find(R"("X1": 0.5)"), 9, R"("X1": 0.6)");
  const Result other = run("run " + write("other.json", text) + " -q --resume " + checkpoint);
  EXPECT_EQ(other.exit_code, 2) << other.err;
  EXPECT_NE(other.err.find("belongs to a different sweep"), std::string::npos) << other.err;
  EXPECT_EQ(std::count(other.err.begin(), other.err.end(), '\n'), 1) << other.err;
}

}  // namespace
}  // namespace paulistrings
