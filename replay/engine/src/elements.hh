// From an element spec string to a queueing core of click-elements/core.
//
// One table maps each element name to a builder that reads the element's
// parameters from the Spec (rejecting unknown ones) and constructs the core.
// The builder also says how to read the core's flow-table size when the
// mechanism keeps one, so the engine can report its statistics.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "queue_core.hh"
#include "spec.hh"

namespace tracelab::engine {

// The spec grammar is the cores' (click-elements/core/spec.hh), shared with
// the ns-3 adapters; the engine keeps using it under its own namespace.
using tracelab::parse_bytes;
using tracelab::parse_count;
using tracelab::parse_rate;
using tracelab::parse_scaled_decimal;
using tracelab::parse_time;
using tracelab::Spec;
using tracelab::SpecError;

// What the element builders may need to know about the node they sit in.
struct NodeContext {
  uint64_t link_bps = 10000000000ULL;
};

struct BuiltCore {
  std::unique_ptr<QueueCore> core;
  // Number of flow-table entries right now; empty when the core has no table.
  std::function<uint64_t()> flow_table_size;
  // The table's longest probe right now (FlowTable::longest_probe: walks
  // every bucket, so read once, at the end of a run); empty without a table.
  std::function<uint64_t()> flow_table_longest_probe;
};

struct ElementInfo {
  std::string name;
  std::string summary;  // one line, with the parameters and their defaults
};

// Parses `spec_text` and builds the core; throws SpecError naming the problem.
BuiltCore make_core(const std::string& spec_text, const NodeContext& node);

// Every element the engine can build, for --help and error messages.
std::vector<ElementInfo> known_elements();

}  // namespace tracelab::engine
