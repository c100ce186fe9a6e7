// tracelab_engine.jumbogen_path: JumboGen end to end at unit scale
// (docs/reference/algorithms.md §5, E-JG-7). The ingress core (jumbogen.hh)
// encapsulates the given packets; each released JumboGram is encoded
// (chunk_format.hh, QTime/pQTime in `unit_ps`), crosses a chain of
// JumboGen-aware RED cores (jumbogen_red.hh) back to back, without queueing
// or transmission time, and is split by the egress (dechunk.hh), shaped or
// not, at its release instant. What the oracles need to see: every
// JumboGram's header and wire size, each router's partial drops, and each
// packet's fate and added delay.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "chunk_format.hh"
#include "dechunk.hh"
#include "jumbogen.hh"
#include "jumbogen_red.hh"

namespace py = pybind11;

namespace tracelab {
namespace {

JumboRedConfig router_config(const py::dict& d) {
  JumboRedConfig c;
  for (const auto& [k, v] : d) {
    const std::string key = py::str(k);
    if (key == "mode") {
      const std::string mode = py::str(v);
      if (mode == "standard") c.mode = JumboRedMode::kStandard;
      else if (mode == "fd") c.mode = JumboRedMode::kFullDrop;
      else if (mode == "pd") c.mode = JumboRedMode::kPartialDrop;
      else throw py::value_error("router mode '" + mode + "': expected standard, fd or pd");
    } else if (key == "min_th") c.min_th = v.cast<double>();
    else if (key == "max_th") c.max_th = v.cast<double>();
    else if (key == "max_p") c.max_p = v.cast<double>();
    else if (key == "w_q") c.w_q = v.cast<double>();
    else if (key == "min_pkt_drop") c.min_pkt_drop = v.cast<double>();
    else if (key == "max_pkt_drop") c.max_pkt_drop = v.cast<double>();
    else if (key == "jg_fraction_weight") c.jg_fraction_weight = v.cast<double>();
    else if (key == "capacity") c.capacity = v.cast<size_t>();
    else if (key == "seed") c.seed = v.cast<uint64_t>();
    else
      throw py::value_error("unknown router parameter '" + key +
                            "' (known: mode, min_th, max_th, max_p, w_q, min_pkt_drop, max_pkt_drop, "
                            "jg_fraction_weight, capacity, seed)");
  }
  return c;
}

py::dict jumbogen_path(const std::vector<std::pair<int64_t, uint32_t>>& packets, uint32_t mtu, int64_t jfet_ps,
                       bool early_release, bool shaping, int64_t unit_ps, const std::vector<py::dict>& routers) {
  if (jfet_ps <= 0 || unit_ps <= 0) throw py::value_error("jfet_ps and unit_ps must be positive");
  for (size_t i = 1; i < packets.size(); ++i) {
    if (packets[i].first < packets[i - 1].first) throw py::value_error("packets must be in arrival order");
  }
  JumboGenConfig ic;
  ic.mtu = mtu;
  ic.jfet = jfet_ps;
  ic.early_release_when_full = early_release;
  ic.capacity_packets = packets.size() ? packets.size() : 1;
  JumboGenIngress ingress(ic);
  std::vector<JumboGenRed> chain;
  chain.reserve(routers.size());
  for (const py::dict& d : routers) chain.emplace_back(router_config(d));
  const Dechunker egress(shaping, unit_ps);

  // Packet i's bytes: its index in every byte, so a split can be checked.
  std::vector<std::vector<uint8_t>> body(packets.size());
  for (size_t i = 0; i < packets.size(); ++i) body[i].assign(packets[i].second, static_cast<uint8_t>(i));

  std::vector<int64_t> gram_of(packets.size(), -1), egress_at(packets.size(), -1);
  std::vector<bool> delivered(packets.size(), false);
  py::list grams;
  std::vector<Packet> store(ingress.max_batch());
  Batch b{store.data(), static_cast<uint32_t>(store.size())};
  std::vector<uint8_t> wire;
  std::vector<jg::PacketRef> refs;
  std::vector<SplitPacket> split;
  Packet router_slot;
  Batch out_of_router{&router_slot, 1};

  auto carry = [&](Time released) {
    refs.clear();
    for (uint32_t k = 0; k < b.count; ++k) {
      const auto& p = body[b.packets[k].handle];
      refs.push_back({p.data(), p.size(), b.packets[k].arrival});
    }
    wire.assign(b.wire_bytes, 0);
    jg::FormatError e = jg::FormatError::kOk;
    size_t len = jg::encode(refs.data(), refs.size(), released, unit_ps, wire.data(), wire.size(), e);
    if (e != jg::FormatError::kOk) throw std::runtime_error(std::string("encode: ") + jg::format_error_name(e));
    jg::View v;
    jg::parse(wire.data(), len, v);
    const uint16_t qtime = v.qtime;
    py::list removed;
    bool alive = true;
    for (JumboGenRed& r : chain) {
      Packet item = b.packets[0];
      item.length = static_cast<uint32_t>(len);
      const JumboRedResult res = r.enqueue_jumbogram(item, wire.data(), len, released);
      removed.append(res.removed);
      len = res.new_length;
      if (!res.queued) {
        alive = false;
        break;
      }
      r.dequeue(released, out_of_router);
    }
    const int64_t gi = static_cast<int64_t>(py::len(grams));
    size_t count = 0;
    if (alive) {
      split.resize(b.count);
      const SplitResult s = egress.split(wire.data(), len, released, split.data(), split.size());
      if (s.error != jg::FormatError::kOk)
        throw std::runtime_error(std::string("split: ") + jg::format_error_name(s.error));
      count = s.count;
    }
    // Partial drops remove trailing packets, so the first `count` survive, in order.
    for (uint32_t k = 0; k < b.count; ++k) {
      const uint64_t h = b.packets[k].handle;
      gram_of[h] = gi;
      if (k < count) {
        delivered[h] = true;
        egress_at[h] = split[k].release;
      }
    }
    py::dict g;
    g["release_ps"] = released;
    g["n"] = b.count;
    g["wire_bytes"] = b.wire_bytes;
    g["header_bytes"] = jg::header_size(b.count);
    g["qtime_units"] = qtime;
    g["removed"] = removed;
    g["delivered"] = count;
    grams.append(g);
  };

  // Releases due at an arrival's instant go first (the core's tie rule).
  size_t next = 0;
  Time now = packets.empty() ? 0 : packets[0].first;
  for (;;) {
    const Time due = ingress.next_ready(now);
    const Time arrival = next < packets.size() ? packets[next].first : kNever;
    if (due == kNever && arrival == kNever) break;
    if (due <= arrival) {
      now = due;
      while (ingress.dequeue(now, b)) carry(ingress.last_released());
    } else {
      now = arrival;
      Packet p;
      p.handle = next;
      p.length = packets[next].second;
      ingress.enqueue(p, now);
      ++next;
    }
  }

  const JumboGenStats& st = ingress.stats();
  py::dict in;
  in["offered"] = ingress.counters().offered;
  in["dropped"] = ingress.counters().dropped_total();
  in["jumbograms"] = st.jumbograms;
  in["encapsulated"] = st.encapsulated;
  in["wire_bytes"] = st.wire_bytes;
  in["full_closes"] = st.full_closes;
  in["wait_total_ps"] = st.wait_total;
  py::dict out;
  out["ingress"] = in;
  out["grams"] = grams;
  out["gram"] = gram_of;
  out["delivered"] = delivered;
  out["egress_ps"] = egress_at;
  return out;
}

}  // namespace

void bind_jumbogen(py::module_& m) {
  m.def("jumbogen_path", &jumbogen_path, py::arg("packets"), py::kw_only(), py::arg("mtu") = 8192,
        py::arg("jfet_ps") = kMillisecond, py::arg("early_release") = false, py::arg("shaping") = true,
        py::arg("unit_ps") = kMicrosecond, py::arg("routers") = std::vector<py::dict>{},
        "JumboGen end to end at unit scale: packets [(arrival_ps, length), ...] in arrival order -> ingress "
        "(mtu, JFET, early release when full) -> RED routers back to back (dicts: mode=standard|fd|pd, min_th, "
        "max_th, max_p, w_q, min_pkt_drop, max_pkt_drop, jg_fraction_weight, capacity, seed) -> egress "
        "(shaping). Returns the ingress counters, every JumboGram (release_ps, n, wire_bytes, header_bytes, "
        "qtime_units, removed per router, delivered) and per packet its gram, whether delivered, egress_ps.");
  m.def(
      "jumbogram_net_cost", [](long n, long h_ip, long h_p) { return jg::net_cost_bytes(n, h_ip, h_p); }, py::arg("n"),
      py::arg("h_ip") = 20, py::arg("h_p") = 38,
      "Bytes JumboGen adds (negative: saves) sending n packets as one JumboGram ([002 §2.1]).");
}

}  // namespace tracelab
