// Loop-body graphs: topological order, cycle detection, critical path, carried dependences.
#include <doctest/doctest.h>

#include <stdexcept>

#include "workloads/tile_program.h"

using namespace attnsim::workloads;

namespace {
OpCost cost(std::uint32_t valu, std::uint32_t mfma = 0) {
  OpCost c;
  c.valu = valu;
  c.mfma = mfma;
  return c;
}
std::size_t pos(const CompiledBody& b, const std::string& name) {
  for (std::size_t i = 0; i < b.names.size(); ++i) {
    if (b.names[i] == name) return i;
  }
  throw std::runtime_error("no op " + name);
}
}  // namespace

TEST_CASE("ops compile in dependence order with flat dependence arrays") {
  BodyBuilder b("test");
  // Declared out of order on purpose: c needs a and b; b needs a.
  b.op("c", Action::pv, Pipe::matrix, cost(0, 8), {"a", "b"})
      .op("a", Action::load_k, Pipe::memory, cost(0), {}, TensorId::k, RowsOf::inner)
      .op("b", Action::online_softmax, Pipe::vector, cost(10), {"a"})
      .carried("a", "c", 2);
  const CompiledBody body = b.compile();
  REQUIRE(body.ops.size() == 3);
  CHECK(pos(body, "a") < pos(body, "b"));
  CHECK(pos(body, "b") < pos(body, "c"));
  const OpTemplate& c = body.ops[pos(body, "c")];
  REQUIRE(c.deps_end - c.deps_begin == 2);
  for (auto i = c.deps_begin; i < c.deps_end; ++i) CHECK(body.deps[i] < pos(body, "c"));
  const OpTemplate& a = body.ops[pos(body, "a")];
  REQUIRE(a.carried_end - a.carried_begin == 1);
  CHECK(body.carried[a.carried_begin].op == pos(body, "c"));
  CHECK(body.carried[a.carried_begin].distance == 2);
  CHECK(a.tensor == TensorId::k);
  // Critical path a(1, no instructions counts as 1) -> b(10) -> c(8) = 19 instructions.
  CHECK(body.critical_path == 19);
}

TEST_CASE("in program order ops keep the order they were added in") {
  // Independent ops d and e, added e first: program order keeps e before d, and deps index by it.
  BodyBuilder b("prog");
  b.program_order()
      .op("a", Action::load_a, Pipe::memory, cost(0), {}, TensorId::gemm_a, RowsOf::outer)
      .op("e", Action::mma, Pipe::matrix, cost(0, 4), {"a"})
      .op("d", Action::lds_operands, Pipe::lds, cost(0), {"a"})
      .op("f", Action::mma, Pipe::matrix, cost(0, 4), {"d"});
  const CompiledBody body = b.compile();
  REQUIRE(body.names == std::vector<std::string>{"a", "e", "d", "f"});
  const OpTemplate& f = body.ops[3];
  REQUIRE(f.deps_end - f.deps_begin == 1);
  CHECK(body.deps[f.deps_begin] == 2);
  BodyBuilder late("late");
  late.program_order().op("x", Action::mma, Pipe::matrix, cost(0, 1), {"y"}).op("y", Action::mma, Pipe::matrix, cost(0, 1));
  CHECK_THROWS_WITH_AS(late.compile(), "late: op 'x' depends on 'y', added after it", std::logic_error);
}

TEST_CASE("a dependence cycle or an unknown op or a zero-distance carried dependence is rejected") {
  BodyBuilder cyc("cyclic");
  cyc.op("x", Action::qk, Pipe::matrix, cost(1), {"y"}).op("y", Action::pv, Pipe::matrix, cost(1), {"x"});
  CHECK_THROWS_WITH_AS(cyc.compile(), "cyclic: the same-iteration dependences form a cycle", std::logic_error);
  BodyBuilder unknown("u");
  unknown.op("x", Action::qk, Pipe::matrix, cost(1), {"nope"});
  CHECK_THROWS_WITH_AS(unknown.compile(), "u: op 'x' depends on unknown op 'nope'", std::logic_error);
  BodyBuilder zero("z");
  zero.op("x", Action::qk, Pipe::matrix, cost(1)).carried("x", "x", 0);
  CHECK_THROWS_WITH_AS(zero.compile(), "z: carried dependence of 'x' has distance 0", std::logic_error);
  BodyBuilder twice("t");
  twice.op("x", Action::qk, Pipe::matrix, cost(1)).op("x", Action::pv, Pipe::matrix, cost(1));
  CHECK_THROWS_WITH_AS(twice.compile(), "t: op 'x' is defined twice", std::logic_error);
}
