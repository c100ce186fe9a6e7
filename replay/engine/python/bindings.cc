// tracelab_engine: the replay engine as a Python module.
//
//   import tracelab_engine as te
//   m = te.run({"sources": ["poisson(load=0.5, size=64, stop=1ms)"],
//               "nodes": [{"element": "fifo(capacity=300)", "rate": "10G"}]})
//
// A configuration is a dict (keys listed in `config_keys`); times are either
// integers in picoseconds or strings with a unit ("50us"), rates integers in
// bit/s or strings ("10G"). The result is a dict of plain Python values,
// with per-packet detail as numpy arrays when asked for.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <climits>
#include <set>
#include <string>

#include <pcap/pcap.h>

#include "decode.hh"
#include "elements.hh"
#include "engine.hh"
#include "sources.hh"
#include "spec.hh"

namespace py = pybind11;
using namespace tracelab;
using namespace tracelab::engine;

namespace {

// An exact time beyond 64 bits (RunResult's WideTime) as a Python int.
py::int_ wide_int(WideTime t) {
  if (t >= INT64_MIN && t <= INT64_MAX) return py::int_(static_cast<int64_t>(t));
  const bool negative = t < 0;
  unsigned __int128 u = negative ? -static_cast<unsigned __int128>(t) : static_cast<unsigned __int128>(t);
  std::string digits;
  for (; u; u /= 10) digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
  if (negative) digits.insert(digits.begin(), '-');
  return py::reinterpret_steal<py::int_>(PyLong_FromString(digits.c_str(), nullptr, 10));
}

Time to_time(const py::handle& v, const std::string& what) {
  if (py::isinstance<py::str>(v)) {
    Time t = 0;
    const std::string s = v.cast<std::string>();
    if (!parse_time(s, t)) throw SpecError(what + ": '" + s + "' is not a duration with a unit (e.g. 50us)");
    return t;
  }
  if (v.is_none()) return kNever;
  return v.cast<Time>();
}

uint64_t to_rate(const py::handle& v, const std::string& what) {
  if (py::isinstance<py::str>(v)) {
    uint64_t r = 0;
    const std::string s = v.cast<std::string>();
    if (!parse_rate(s, r)) throw SpecError(what + ": '" + s + "' is not a bit rate (e.g. 10G)");
    return r;
  }
  return v.cast<uint64_t>();
}

void check_keys(const py::dict& d, const std::set<std::string>& known, const std::string& what) {
  for (auto item : d) {
    const std::string k = py::str(item.first);
    if (!known.count(k)) {
      std::string list;
      for (const auto& n : known) list += (list.empty() ? "" : ", ") + n;
      throw SpecError(what + ": unknown key '" + k + "' (known: " + list + ")");
    }
  }
}

const std::set<std::string> kRunKeys = {"sources",  "nodes",        "classes",           "seed",
                                        "until",    "measure_from", "measure_until",     "router_pps",
                                        "out_pcap", "detail",       "max_delay_samples", "batch_capacity"};

RunConfig to_config(const py::dict& d) {
  check_keys(d, kRunKeys, "config");
  RunConfig c;
  if (d.contains("sources")) c.sources = d["sources"].cast<std::vector<std::string>>();
  if (d.contains("nodes")) {
    c.nodes.clear();
    for (auto n : d["nodes"]) {
      NodeConfig nc;
      if (py::isinstance<py::str>(n)) {
        nc.element = n.cast<std::string>();
      } else {
        py::dict nd = n.cast<py::dict>();
        check_keys(nd, {"element", "rate", "prop_delay", "overhead", "min_service"}, "node");
        if (nd.contains("element")) nc.element = nd["element"].cast<std::string>();
        if (nd.contains("rate")) nc.rate_bps = to_rate(nd["rate"], "node rate");
        if (nd.contains("prop_delay")) nc.prop_delay = to_time(nd["prop_delay"], "node prop_delay");
        if (nd.contains("overhead")) nc.overhead_bytes = nd["overhead"].cast<uint32_t>();
        if (nd.contains("min_service")) nc.min_service = to_time(nd["min_service"], "node min_service");
      }
      c.nodes.push_back(nc);
    }
  }
  if (d.contains("classes")) {
    for (auto cl : d["classes"]) {
      py::dict cd = cl.cast<py::dict>();
      check_keys(cd, {"name", "budget", "qtl", "mtq"}, "class");
      ClassConfig cc;
      if (cd.contains("name")) cc.name = cd["name"].cast<std::string>();
      if (cd.contains("budget")) cc.budget = to_time(cd["budget"], "class budget");
      if (cd.contains("qtl")) cc.qtl = to_time(cd["qtl"], "class qtl");
      if (cd.contains("mtq")) cc.mtq = to_time(cd["mtq"], "class mtq");
      c.classes.push_back(cc);
    }
  }
  if (d.contains("seed")) c.seed = d["seed"].cast<uint64_t>();
  if (d.contains("until")) c.until = to_time(d["until"], "until");
  if (d.contains("measure_from")) c.measure_from = to_time(d["measure_from"], "measure_from");
  if (d.contains("measure_until")) c.measure_until = to_time(d["measure_until"], "measure_until");
  if (d.contains("router_pps")) c.router_pps = d["router_pps"].cast<double>();
  if (d.contains("out_pcap") && !d["out_pcap"].is_none()) c.out_pcap = d["out_pcap"].cast<std::string>();
  if (d.contains("detail")) c.detail = d["detail"].cast<bool>();
  if (d.contains("max_delay_samples")) c.max_delay_samples = d["max_delay_samples"].cast<uint64_t>();
  if (d.contains("batch_capacity")) c.batch_capacity = d["batch_capacity"].cast<uint32_t>();
  return c;
}

py::object time_or_none(Time t) { return t == kNever ? py::object(py::none()) : py::object(py::int_(t)); }

py::dict quantiles(const Quantiles& q) {
  py::dict d;
  d["count"] = q.count;
  d["mean_ps"] = q.mean;
  d["min_ps"] = q.min;
  d["p50_ps"] = q.p50;
  d["p90_ps"] = q.p90;
  d["p99_ps"] = q.p99;
  d["p999_ps"] = q.p999;
  d["max_ps"] = q.max;
  d["exact"] = q.exact;
  return d;
}

py::dict drops(const uint64_t* dropped) {
  py::dict d;
  for (int r = 0; r < kDropReasons; ++r) d[drop_reason_name(static_cast<DropReason>(r))] = dropped[r];
  return d;
}

py::dict class_dict(const ClassResult& c) {
  py::dict d;
  d["name"] = c.name;
  d["budget_ps"] = time_or_none(c.budget);
  d["offered"] = c.offered;
  d["offered_bytes"] = c.offered_bytes;
  d["delivered"] = c.delivered;
  d["delivered_bytes"] = c.delivered_bytes;
  d["dropped"] = drops(c.dropped);
  d["dropped_total"] = c.dropped_total;
  d["queued_end"] = c.queued_end;
  d["violations"] = c.violations;
  d["r_v"] = c.r_v;
  d["eplr"] = c.eplr;
  d["queue_delay"] = quantiles(c.queue_delay);
  d["latency"] = quantiles(c.latency);
  d["excess_delay"] = quantiles(c.excess);
  return d;
}

template <class T>
py::array_t<T> array(const std::vector<T>& v) {
  py::array_t<T> a(v.size());
  std::copy(v.begin(), v.end(), a.mutable_data());
  return a;
}

py::dict result_dict(RunResult& r) {
  py::dict out;
  py::list classes;
  for (const auto& c : r.classes) classes.append(class_dict(c));
  out["classes"] = classes;
  out["overall"] = class_dict(r.overall);
  py::list nodes;
  for (const auto& n : r.nodes) {
    py::dict d;
    d["element"] = n.element;
    d["rate_bps"] = n.rate_bps;
    d["prop_delay_ps"] = n.prop_delay;
    d["offered"] = n.offered;
    d["enqueued"] = n.enqueued;
    d["served"] = n.served;
    d["dropped"] = drops(n.dropped);
    d["queued_end"] = n.queued_end;
    d["highwater_packets"] = n.highwater_packets;
    d["highwater_bytes"] = n.highwater_bytes;
    d["transmissions"] = n.transmissions;
    d["wire_bytes"] = n.wire_bytes;
    d["mean_transmission_bytes"] = n.mean_transmission_bytes;
    d["mean_packets_per_transmission"] = n.mean_packets_per_transmission;
    d["min_transmission_bytes"] = n.min_transmission_bytes;
    d["max_transmission_bytes"] = n.max_transmission_bytes;
    d["busy_ps"] = n.busy;
    d["mean_queue_delay_ps"] = n.mean_queue_delay;
    d["utilization"] = n.utilization;
    d["eta"] = n.eta;
    d["out_bps"] = n.out_bps;
    if (n.has_flow_table) {
      py::dict ft;
      ft["time_weighted_mean"] = n.flow_table_mean;
      ft["max"] = n.flow_table_max;
      ft["longest_probe"] = n.flow_table_longest_probe;
      ft["time_at_size_ps"] = n.flow_table_time_at;
      d["flow_table"] = ft;
    } else {
      d["flow_table"] = py::none();
    }
    nodes.append(d);
  }
  out["nodes"] = nodes;
  py::list sources;
  for (const auto& s : r.sources) {
    py::dict d;
    d["spec"] = s.first;
    py::dict counts;
    for (const auto& kv : s.second) counts[py::str(kv.first)] = kv.second;
    d["counts"] = counts;
    sources.append(d);
  }
  out["sources"] = sources;
  py::dict cons;
  cons["offered"] = r.offered;
  cons["delivered"] = r.delivered;
  cons["dropped"] = r.dropped;
  cons["queued"] = r.queued;
  cons["in_flight"] = r.in_flight;
  cons["holds"] = true;  // run() raises otherwise
  out["conservation"] = cons;
  py::dict timing;
  timing["first_arrival_ps"] = wide_int(r.first_arrival);
  timing["last_arrival_ps"] = wide_int(r.last_arrival);
  timing["end_ps"] = wide_int(r.end_time);
  timing["span_ps"] = wide_int(r.span);
  timing["idle_skipped_ps"] = wide_int(r.idle_skipped);
  timing["mpps_in_virtual"] = r.mpps_in;
  timing["mpps_out_virtual"] = r.mpps_out;
  timing["wall_seconds"] = r.wall_seconds;
  timing["wall_mpps"] = r.wall_mpps;
  out["timing"] = timing;
  if (!r.detail.created.empty()) {
    py::dict d;
    d["source"] = array(r.detail.source);
    d["length"] = array(r.detail.length);
    d["cls"] = array(r.detail.cls);
    d["fate"] = array(r.detail.fate);
    d["node"] = array(r.detail.node);
    d["created_ps"] = array(r.detail.created);
    d["end_ps"] = array(r.detail.end);
    d["queue_delay_ps"] = array(r.detail.queue_delay);
    d["flow"] = array(r.detail.flow);
    out["detail"] = d;
  }
  return out;
}

// Every frame of a capture through the engine's decoder (decode.cc), one
// array entry per frame: what the pcap sources see before the class rules.
// The cross-part contract test (tests/test_decoder_contract.py) compares it
// with the analyzer's connections.
py::dict decode_pcap(const std::string& path) {
  char err[PCAP_ERRBUF_SIZE] = {0};
  pcap_t* p = pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, err);
  if (!p) throw py::value_error("cannot read pcap '" + path + "': " + err);
  const int link = pcap_datalink(p);
  std::vector<uint8_t> result, version, proto, has_ports, src, dst;
  std::vector<uint16_t> sport, dport;
  std::vector<uint32_t> ip_length;
  std::vector<uint64_t> conn_hash, flow_hash;
  pcap_pkthdr* h = nullptr;
  const u_char* data = nullptr;
  int rc = 0;
  while ((rc = pcap_next_ex(p, &h, &data)) == 1) {
    Decoded d;
    const DecodeResult r =
        linktype_supported(link) ? decode_frame(link, data, h->caplen, h->len, d) : DecodeResult::kNonIp;
    result.push_back(static_cast<uint8_t>(r));
    version.push_back(d.ip_version);
    proto.push_back(d.proto);
    has_ports.push_back(d.has_ports);
    sport.push_back(d.sport);
    dport.push_back(d.dport);
    ip_length.push_back(d.ip_length);
    conn_hash.push_back(d.conn_hash);
    flow_hash.push_back(d.flow_hash);
    src.insert(src.end(), d.src, d.src + 16);
    dst.insert(dst.end(), d.dst, d.dst + 16);
  }
  const std::string read_error = rc == PCAP_ERROR ? pcap_geterr(p) : "";
  pcap_close(p);
  if (!read_error.empty())
    throw py::value_error("pcap '" + path + "': " + read_error + " (after packet " + std::to_string(result.size()) +
                          ")");
  py::dict out;
  out["result"] = array(result);
  out["ip_version"] = array(version);
  out["proto"] = array(proto);
  out["has_ports"] = array(has_ports);
  out["sport"] = array(sport);
  out["dport"] = array(dport);
  out["ip_length"] = array(ip_length);
  out["conn_hash"] = array(conn_hash);
  out["flow_hash"] = array(flow_hash);
  out["src"] = array(src).reshape({static_cast<py::ssize_t>(result.size()), py::ssize_t{16}});
  out["dst"] = array(dst).reshape({static_cast<py::ssize_t>(result.size()), py::ssize_t{16}});
  return out;
}

}  // namespace

namespace tracelab {
void bind_jumbogen(py::module_& m);  // jumbogen_path.cc
}  // namespace tracelab

PYBIND11_MODULE(tracelab_engine, m) {
  m.doc() = "tracelab embedded replay engine: sources -> queueing cores -> exact links, in picoseconds";
  py::register_exception<SpecError>(m, "SpecError", PyExc_ValueError);
  py::register_exception<ConservationError>(m, "ConservationError", PyExc_RuntimeError);
  bind_jumbogen(m);

  m.def(
      "run",
      [](const py::dict& config) {
        RunConfig cfg = to_config(config);
        RunResult r;
        {
          Engine engine(cfg);
          py::gil_scoped_release release;
          r = engine.run();
        }
        return result_dict(r);
      },
      py::arg("config"), "Run one replay; returns the metrics as a dict.");
  m.def(
      "check_element", [](const std::string& spec, uint64_t rate) { make_core(spec, NodeContext{rate}); },
      py::arg("spec"), py::arg("rate") = 10000000000ULL, "Raise SpecError if the element spec is not valid.");
  m.def(
      "parse_spec",
      [](const std::string& text) {
        const Spec s = Spec::parse(text);
        return py::make_tuple(s.name(), s.params());
      },
      py::arg("text"),
      "The element/source spec grammar (click-elements/core/spec.hh), the engine's and ns-3's own parser:\n"
      "'name(key=value, ...)' -> (name, [(key, value), ...]), values unquoted; raise SpecError (with the\n"
      "column) if the text is malformed. Keys and values are not checked against any element.");
  m.def(
      "parse_rate", [](const std::string& text) { return to_rate(py::str(text), "rate"); }, py::arg("text"),
      "A bit rate as every spec and run option reads it (click-elements/core/spec.hh parse_rate):\n"
      "'10G', '2.5Gbps', '20M', '1T' -> bits per second (int); raise SpecError otherwise.");
  m.def(
      "parse_time", [](const std::string& text) { return to_time(py::str(text), "time"); }, py::arg("text"),
      "A duration as every spec and run option reads it (click-elements/core/spec.hh parse_time):\n"
      "'50us', '1.5ms', '2s' -> picoseconds (int); a unit (ps, ns, us, ms, s) is required; raise SpecError\n"
      "otherwise.");
  m.def("known_elements", [] {
    py::list l;
    for (const auto& e : known_elements()) l.append(py::make_tuple(e.name, e.summary));
    return l;
  });
  m.def("known_sources", [] { return known_sources(); });
  m.def("decode_pcap", &decode_pcap, py::arg("path"),
        "Every frame of a pcap through the engine's decoder: numpy arrays, one entry per frame, of\n"
        "result (index into decode_results()), ip_version, proto, has_ports, sport, dport, ip_length,\n"
        "conn_hash (the same both ways), flow_hash, and src/dst (n x 16 bytes, IPv4 in the first 4).\n"
        "ValueError if the file cannot be read.");
  m.def("decode_results", [] {
    py::list l;
    for (auto r : {DecodeResult::kOk, DecodeResult::kNonIp, DecodeResult::kTruncated, DecodeResult::kBadIpHeader})
      l.append(decode_result_name(r));
    return l;
  });
  m.def("drop_reasons", [] {
    py::list l;
    for (int r = 0; r < kDropReasons; ++r) l.append(drop_reason_name(static_cast<DropReason>(r)));
    return l;
  });
  m.attr("config_keys") = py::cast(std::vector<std::string>(kRunKeys.begin(), kRunKeys.end()));
}
