#include <gtest/gtest.h>

#include "elements.hh"

using namespace tracelab;
using namespace tracelab::engine;

TEST(Elements, FactoryBuildsAndRejects) {
  BuiltCore b = make_core("fifo(capacity=2)", NodeContext{});
  ASSERT_NE(b.core, nullptr);
  EXPECT_THROW(make_core("fifo(capacity=0)", NodeContext{}), SpecError);
  EXPECT_THROW(make_core("fifo(size=3)", NodeContext{}), SpecError);
  EXPECT_THROW(make_core("nosuch(capacity=3)", NodeContext{}), SpecError);
  EXPECT_THROW(make_core("fifo(granularity=bits)", NodeContext{}), SpecError);
}
