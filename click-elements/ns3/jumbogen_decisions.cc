// Same decisions for JumboGen-aware RED (algorithms.md §5.3), which the
// replay engine does not have: one seeded sequence of plain packets and
// JumboGrams (some already cut upstream), with dequeues interleaved so that
// the queue builds up and RED acts, goes through tracelab::JumboGenRed
// driven directly and through TlJumboGenRedQueueDisc (built from the spec
// string, as every driver builds its queue disc). Every arrival's fate
// (queued, or dropped and why), the packets a partial drop removed, the
// length it stored, and the order and length of every dequeued packet must
// be the same, in each mode (partial, full, standard).
//
// Usage: tl-ns3-jumbogen-decisions [ARRIVALS]   (default 20000 per mode)
// Prints one PASS/FAIL line per mode; exit 1 on a FAIL, 2 on bad usage.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ns3/ipv4-header.h"
#include "ns3/ipv4-queue-disc-item.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"

#include "chunk_format.hh"
#include "jumbogen_red.hh"
#include "rng.hh"
#include "tl-queue-disc.hh"

using namespace ns3;
namespace jg = tracelab::jg;

namespace {

constexpr uint32_t kIpHeader = 20;

struct Arrival {
  bool jumbogram = false;
  std::vector<uint8_t> payload;  // bytes after the IPv4 header (the chunk encoding for a JumboGram)
};

// The sequence: per step an arrival, and a dequeue with probability 0.85, so
// that the queue fills and RED selects.
struct Step {
  Arrival arrival;
  bool dequeue = false;
};

std::vector<Step> MakeSequence(uint32_t arrivals, uint64_t seed) {
  tracelab::Rng rng(seed);
  std::vector<Step> steps(arrivals);
  std::vector<uint8_t> zeros(1500, 0);
  std::vector<jg::PacketRef> refs;
  for (Step& s : steps) {
    s.dequeue = rng.bernoulli(0.85);
    Arrival& a = s.arrival;
    a.jumbogram = rng.bernoulli(0.4);
    if (!a.jumbogram) {
      a.payload.assign(40 + rng.next_u64() % 1461, 0);
      continue;
    }
    const size_t n = 1 + rng.next_u64() % 12;
    refs.clear();
    for (size_t i = 0; i < n; ++i) refs.push_back({zeros.data(), 40 + rng.next_u64() % 700, 0});
    a.payload.resize(jg::header_size(n) + n * 740);
    jg::FormatError err;
    const size_t len = jg::encode(refs.data(), n, 0, 1, a.payload.data(), a.payload.size(), err);
    if (err != jg::FormatError::kOk) {
      std::fprintf(stderr, "tl-ns3-jumbogen-decisions: encode: %s\n", jg::format_error_name(err));
      std::exit(2);
    }
    a.payload.resize(len);
    // An upstream router already cut some: the drops are not cumulative.
    if (rng.bernoulli(0.2)) {
      size_t cut_len = 0;
      uint16_t removed = 0;
      jg::partial_drop(a.payload.data(), a.payload.size(), static_cast<uint16_t>(rng.next_u64() % (n + 1)), cut_len,
                       removed);
      a.payload.resize(cut_len);
    }
  }
  return steps;
}

// What happened, in one comparable line per event.
using Log = std::vector<std::string>;

std::string Fate(uint32_t id, const char* what, uint32_t length, uint16_t removed) {
  return "arrival " + std::to_string(id) + ": " + what + " length " + std::to_string(length) + " removed " +
         std::to_string(removed);
}

std::string Served(uint32_t id, uint32_t length) {
  return "served " + std::to_string(id) + " length " + std::to_string(length);
}

// --- the core, driven directly --------------------------------------------------

class Sink final : public tracelab::DropSink {
 public:
  void on_drop(const tracelab::Packet&, tracelab::DropReason why, tracelab::Time) override {
    reason = tracelab::drop_reason_name(why);
  }
  const char* reason = nullptr;
};

Log RunCore(const std::vector<Step>& steps, const tracelab::JumboRedConfig& cfg) {
  tracelab::JumboGenRed core(cfg);
  Sink sink;
  core.set_drop_sink(&sink);
  tracelab::Packet storage[1];
  tracelab::Batch batch{storage, 1};
  std::vector<uint32_t> stored_length(steps.size());
  std::vector<uint8_t> bytes;
  Log log;
  for (uint32_t id = 0; id < steps.size(); ++id) {
    const Arrival& a = steps[id].arrival;
    tracelab::Packet p;
    p.length = kIpHeader + static_cast<uint32_t>(a.payload.size());
    p.handle = id;
    sink.reason = nullptr;
    uint16_t removed = 0;
    uint32_t length = p.length;
    if (a.jumbogram) {
      bytes = a.payload;
      const tracelab::JumboRedResult r = core.enqueue_jumbogram(p, bytes.data(), bytes.size(), 0);
      removed = r.queued ? r.removed : 0;
      length = kIpHeader + static_cast<uint32_t>(r.queued ? r.new_length : a.payload.size());
    } else {
      core.enqueue(p, 0);
    }
    stored_length[id] = length;
    log.push_back(Fate(id, sink.reason ? sink.reason : "queued", length, removed));
    if (steps[id].dequeue && core.dequeue(0, batch)) {
      const uint32_t served = static_cast<uint32_t>(batch.packets[0].handle);
      log.push_back(Served(served, stored_length[served]));
    }
  }
  while (core.dequeue(0, batch)) {
    const uint32_t served = static_cast<uint32_t>(batch.packets[0].handle);
    log.push_back(Served(served, stored_length[served]));
  }
  return log;
}

// --- the queue disc ---------------------------------------------------------------

struct QdiscRun {
  const char* reason = nullptr;
  uint16_t removed = 0;
  uint32_t cut_length = 0;
  void OnDrop(Ptr<const QueueDiscItem>, const char* why) { reason = why; }
  void OnPartialDrop(Ptr<const QueueDiscItem> item, uint16_t n) {
    removed = n;
    cut_length = item->GetSize();
  }
};

Log RunQdisc(const std::vector<Step>& steps, const std::string& spec) {
  Ptr<QueueDisc> qd = TlSpecFactory(TlParseSpec(spec, 0)).Create<QueueDisc>();
  qd->Initialize();
  QdiscRun run;
  qd->TraceConnectWithoutContext("DropBeforeEnqueue", MakeCallback(&QdiscRun::OnDrop, &run));
  qd->TraceConnectWithoutContext("PartialDrop", MakeCallback(&QdiscRun::OnPartialDrop, &run));
  Log log;
  auto serve = [&log](Ptr<QueueDiscItem> item) {
    Ptr<Ipv4QueueDiscItem> ip = DynamicCast<Ipv4QueueDiscItem>(item);
    log.push_back(Served(ip->GetHeader().GetIdentification(), ip->GetSize()));
  };
  for (uint32_t id = 0; id < steps.size(); ++id) {
    const Arrival& a = steps[id].arrival;
    Ipv4Header h;
    h.SetProtocol(a.jumbogram ? TlChunkItem::kProtocol : 17);
    h.SetIdentification(static_cast<uint16_t>(id));
    h.SetPayloadSize(static_cast<uint16_t>(a.payload.size()));
    h.SetSource(Ipv4Address("10.0.0.1"));
    h.SetDestination(Ipv4Address("10.0.1.1"));
    Ptr<Packet> pkt = Create<Packet>(a.payload.data(), static_cast<uint32_t>(a.payload.size()));
    Ptr<Ipv4QueueDiscItem> item = Create<Ipv4QueueDiscItem>(pkt, Address(), 0x0800, h);
    run = QdiscRun{};
    const bool queued = qd->Enqueue(item);
    const uint32_t length = run.removed && queued ? run.cut_length : item->GetSize();
    log.push_back(
        Fate(id, queued ? "queued" : (run.reason ? run.reason : "refused"), length, queued ? run.removed : 0));
    if (steps[id].dequeue)
      if (Ptr<QueueDiscItem> out = qd->Dequeue()) serve(out);
  }
  while (Ptr<QueueDiscItem> out = qd->Dequeue()) serve(out);
  return log;
}

}  // namespace

int main(int argc, char** argv) {
  uint32_t arrivals = 20000;
  if (argc > 2 || (argc == 2 && (arrivals = static_cast<uint32_t>(std::strtoul(argv[1], nullptr, 10))) == 0) ||
      arrivals > 65536) {
    std::fprintf(stderr, "usage: tl-ns3-jumbogen-decisions [ARRIVALS 1..65536]\n");
    return 2;
  }
  const std::vector<Step> steps = MakeSequence(arrivals, 7);
  int status = 0;
  const struct {
    const char* name;
    tracelab::JumboRedMode mode;
  } modes[] = {{"partial", tracelab::JumboRedMode::kPartialDrop},
               {"full", tracelab::JumboRedMode::kFullDrop},
               {"standard", tracelab::JumboRedMode::kStandard}};
  for (const auto& m : modes) {
    tracelab::JumboRedConfig cfg;
    cfg.mode = m.mode;
    cfg.min_th = 20;
    cfg.max_th = 60;
    cfg.seed = 3;
    cfg.capacity = 40;  // below max_th: the averaged queue lags, so tail drops happen too
    const std::string spec = std::string("jumbogenred(mode=") + m.name +
                             ", min_th=20, max_th=60, seed=3, capacity=" + std::to_string(cfg.capacity) + ")";
    const Log want = RunCore(steps, cfg);
    const Log got = RunQdisc(steps, spec);
    size_t first = 0;
    while (first < want.size() && first < got.size() && want[first] == got[first]) ++first;
    size_t early = 0, full = 0, cut = 0, served = 0;
    for (const std::string& line : want) {
      early += line.find("early_discard") != std::string::npos;
      full += line.find("buffer_full") != std::string::npos;
      cut += line.find("queued") != std::string::npos && line.find("removed 0") == std::string::npos;
      served += line.rfind("served", 0) == 0;
    }
    // A run where RED or the tail drop never acts would compare nothing of interest.
    const bool exercised =
        early > 0 && full > 0 && served > 0 && (m.mode != tracelab::JumboRedMode::kPartialDrop || cut > 0);
    if (first == want.size() && want.size() == got.size() && exercised) {
      std::printf(
          "PASS jumbogenred(mode=%s): %zu events the same (%zu early drops, %zu tail drops, %zu cut, %zu "
          "served)\n",
          m.name, want.size(), early, full, cut, served);
    } else {
      status = 1;
      std::printf("FAIL jumbogenred(mode=%s): ", m.name);
      if (!exercised)
        std::printf("not exercised (%zu early drops, %zu tail drops, %zu cut, %zu served)\n", early, full, cut, served);
      else
        std::printf("event %zu: core '%s', queue disc '%s'\n", first, first < want.size() ? want[first].c_str() : "-",
                    first < got.size() ? got[first].c_str() : "-");
    }
  }
  Simulator::Destroy();
  return status;
}
