// The spec grammar (core/spec.hh): the parser, the typed getters and the
// value parsers, and the cases of spec_cases.tsv that the engine's Python
// module and the ns-3 adapters are checked against too.
#include "spec.hh"
#include "efd_flow_table.hh"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

using namespace tracelab;

namespace {

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> out;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, '\t')) out.push_back(field);
  return out;
}

}  // namespace

TEST(Spec, SharedCasesAreAcceptedAndRejected) {
  std::ifstream in(TRACELAB_TESTS_DIR "/spec_cases.tsv");
  ASSERT_TRUE(in) << "cannot read " TRACELAB_TESTS_DIR "/spec_cases.tsv";
  std::string line;
  int ok = 0, bad = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> f = split_tabs(line);
    ASSERT_GE(f.size(), 3u) << line;
    SCOPED_TRACE(f[1]);
    if (f[0] == "ok") {
      ++ok;
      const Spec s = Spec::parse(f[1]);
      EXPECT_EQ(s.name(), f[2]);
      Spec::Params want;
      for (size_t i = 3; i < f.size(); ++i) {
        const size_t eq = f[i].find('=');
        want.emplace_back(f[i].substr(0, eq), f[i].substr(eq + 1));
      }
      EXPECT_EQ(s.params(), want);
    } else {
      ASSERT_EQ(f[0], "bad");
      ASSERT_EQ(f.size(), 4u) << line;
      ++bad;
      try {
        Spec::parse(f[1]);
        ADD_FAILURE() << "accepted";
      } catch (const SpecError& e) {
        EXPECT_NE(std::string(e.what()).find("at column " + f[2] + ": " + f[3]), std::string::npos) << e.what();
      }
    }
  }
  EXPECT_GT(ok, 0);
  EXPECT_GT(bad, 0);
}

TEST(Spec, ParsesNameAndParameters) {
  Spec s = Spec::parse(" efd( capacity = 300 , th=30000 ) ");
  EXPECT_EQ(s.name(), "efd");
  EXPECT_EQ(s.count("capacity", 0), 300u);
  EXPECT_EQ(s.bytes("th", 0), 30000u);
  EXPECT_NO_THROW(s.finish());
}

TEST(Spec, BareNameHasNoParameters) {
  Spec s = Spec::parse("fifo");
  EXPECT_EQ(s.name(), "fifo");
  EXPECT_EQ(s.count("capacity", 7), 7u);
}

TEST(Spec, UnitsAreExactIntegers) {
  Spec s = Spec::parse("x(r=2.5G, t=1.3s, u=50us, p=67200ps, b=30KB, k=64KiB, n=64k, q='a,b)')");
  EXPECT_EQ(s.rate("r", 0), 2500000000ULL);
  EXPECT_EQ(s.time("t", 0), 1300000000000LL);
  EXPECT_EQ(s.time("u", 0), 50000000LL);
  EXPECT_EQ(s.time("p", 0), 67200);
  EXPECT_EQ(s.bytes("b", 0), 30000u);
  EXPECT_EQ(s.bytes("k", 0), 65536u);
  EXPECT_EQ(s.count("n", 0), 64000u);
  EXPECT_EQ(s.string("q", ""), "a,b)");
}

TEST(Spec, NestedValuesKeepTheirParentheses) {
  Spec s = Spec::parse("poisson(size=bpareto(1.1, 40, 1500), load=0.5)");
  EXPECT_EQ(s.string("size", ""), "bpareto(1.1, 40, 1500)");
  EXPECT_DOUBLE_EQ(s.real("load", 0), 0.5);
}

TEST(Spec, ErrorsNameTheProblem) {
  auto message = [](const char* text) {
    try {
      Spec::parse(text);
    } catch (const SpecError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("efd(capacity=300, th=30000").find("expected ',' or ')'"), std::string::npos);
  EXPECT_NE(message("efd(capacity=300,,").find("column"), std::string::npos);
  EXPECT_NE(message("efd(capacity=1, capacity=2)").find("given twice"), std::string::npos);
  EXPECT_NE(message("(x=1)").find("expected a name"), std::string::npos);
}

TEST(Spec, BadValuesAndUnknownKeysAreRejected) {
  Spec s = Spec::parse("fifo(capacity=3x, t=50, rate=0)");
  EXPECT_THROW(s.count("capacity", 0), SpecError);
  EXPECT_THROW(s.time("t", 0), SpecError);  // no unit
  EXPECT_THROW(s.rate("rate", 0), SpecError);
  Spec u = Spec::parse("fifo(capacty=3)");
  u.count("capacity", 0);
  try {
    u.finish();
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown parameter 'capacty'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("known: capacity"), std::string::npos);
  }
}

TEST(Spec, FractionsThatAreNotWholeInTheUnitAreRejected) {
  uint64_t out = 0;
  EXPECT_TRUE(parse_scaled_decimal("0.5", 1000, out));
  EXPECT_EQ(out, 500u);
  EXPECT_FALSE(parse_scaled_decimal("0.0005", 1000, out));
  EXPECT_FALSE(parse_scaled_decimal("1.2.3", 1, out));
  Time t = 0;
  EXPECT_TRUE(parse_time("0.5ps", t) == false);
}

TEST(Spec, SeedsTakeEverySixtyFourBitValueInDecimalOrHex) {
  Spec s = Spec::parse("las(a=0, b=18446744073709551615, c=0xFFFFFFFFFFFFFFFF, d=0x74726163656c6162, e=010)");
  EXPECT_EQ(s.seed("a", 1), 0u);
  EXPECT_EQ(s.seed("b", 0), UINT64_MAX);
  EXPECT_EQ(s.seed("c", 0), UINT64_MAX);
  EXPECT_EQ(s.seed("d", 0), kFlowTableSeed);
  EXPECT_EQ(s.seed("e", 0), 10u);  // decimal: a leading 0 is not octal
  EXPECT_EQ(s.seed("absent", 7), 7u);
  uint64_t out = 0;
  for (const char* bad : {"18446744073709551616", "0x10000000000000000", "0x", "0x1g", "-1", "1.0", "64k", "1e3", " 1"})
    EXPECT_FALSE(parse_seed(bad, out)) << bad;
  Spec b = Spec::parse("las(table_seed=0x1g)");
  try {
    b.seed("table_seed", 0);
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("parameter 'table_seed'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("not a 64-bit value"), std::string::npos);
  }
}
