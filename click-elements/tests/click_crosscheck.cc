// The reference side of the Click cross-check (click/crosscheck.sh): feeds a
// pcap into a core directly, through the exact link, scheduling events the
// way the Click elements do under `click --simtime`, and writes the
// departures and the drops as nanosecond pcaps (raw IP, times relative to
// the first packet). crosscheck.sh runs the same trace through the Click
// element and requires identical records: order, bytes and times.
//
// Usage: click_crosscheck CORE TRACE RATE DEPARTURES.pcap DROPS.pcap [KEY=VALUE...]
//   CORE   fifo | efd | chutq | mtqqtl
//   TRACE  Ethernet pcap; IPv4 frames are kept (Classifier(12/0800) ->
//          Strip(14) in the Click configurations), the rest skipped
//   RATE   link rate, bits per second (TLExactUnqueue RATE)
//   keys   capacity=N (fifo, efd, mtqqtl), threshold=BYTES (efd),
//          mtq=US qtl=US (mtqqtl: the marker's budgets)
//
// What is modelled of Click (see click/README.md "Cross-check"):
// * an arrival at t enters the queue at t; if the link is idle it pulls at
//   once and the packet starts at t (TLExactUnqueue's task);
// * a busy link pulls when its Timer fires, at the departure rounded up to
//   the nanosecond (tl_timestamp_ceil); the packet starts at the exact
//   (picosecond) end of the previous one; the pull precedes an arrival at
//   the same instant (Click runs timers before tasks);
// * a chunking core's timer (TLChunkQueue) fires at next_ready() rounded up
//   to the nanosecond and wakes an idle link, which pulls then;
// * departure time = when the packet leaves the link element (its start),
//   drop time = the arrival that caused the drop.
// Not modelled: Click's simulated clock advances 1 ns at every
// Timestamp::now() call (Timestamp::warp, lib/timestamp.cc), so Click's
// times run a few ns behind these after each event; crosscheck.sh bounds
// that difference instead of requiring equality.
#include <pcap/pcap.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "chunk_format.hh"
#include "chutq.hh"
#include "efd.hh"
#include "fifo.hh"
#include "ipv4_meta.hh"
#include "link.hh"
#include "mtq_qtl.hh"
#include "mtq_qtl_header.hh"

namespace {
using namespace tracelab;

struct Frame {
  Time t;                   // ps since the first IPv4 frame
  std::vector<uint8_t> ip;  // captured bytes after the 14-byte Ethernet header
};

[[noreturn]] void die(const std::string& msg) {
  std::fprintf(stderr, "click_crosscheck: %s\n", msg.c_str());
  std::exit(2);
}

std::vector<Frame> read_trace(const char* path) {
  char err[PCAP_ERRBUF_SIZE];
  pcap_t* pc = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, err);
  if (!pc) die(std::string(path) + ": " + err);
  if (pcap_datalink(pc) != DLT_EN10MB) die(std::string(path) + ": not an Ethernet capture");
  std::vector<Frame> out;
  pcap_pkthdr* h;
  const u_char* d;
  int64_t t0 = -1;
  while (pcap_next_ex(pc, &h, &d) == 1) {
    if (h->caplen < 14 + 20 || d[12] != 0x08 || d[13] != 0x00) continue;
    const int64_t ns = int64_t(h->ts.tv_sec) * 1000000000 + h->ts.tv_usec;  // tv_usec holds ns here
    if (t0 < 0) t0 = ns;
    // CheckIPHeader trims link padding to the IP total length.
    const uint8_t* ip = d + 14;
    size_t len = h->caplen - 14;
    const size_t total = size_t(ip[2]) << 8 | ip[3];
    if (total >= 20 && total < len) len = total;
    out.push_back(Frame{(ns - t0) * kNanosecond, std::vector<uint8_t>(ip, ip + len)});
  }
  pcap_close(pc);
  return out;
}

class Dump {
 public:
  explicit Dump(const char* path) {
    dead_ = pcap_open_dead_with_tstamp_precision(DLT_RAW, 65535, PCAP_TSTAMP_PRECISION_NANO);
    dump_ = pcap_dump_open(dead_, path);
    if (!dump_) die(std::string(path) + ": " + pcap_geterr(dead_));
  }
  ~Dump() {
    pcap_dump_close(dump_);
    pcap_close(dead_);
  }
  void write(Time t, const uint8_t* bytes, size_t len) {
    if (t % kNanosecond) die("record time not on a nanosecond");
    const int64_t ns = t / kNanosecond;
    pcap_pkthdr h{};
    h.ts.tv_sec = ns / 1000000000;
    h.ts.tv_usec = ns % 1000000000;
    h.caplen = h.len = static_cast<bpf_u_int32>(len);
    pcap_dump(reinterpret_cast<u_char*>(dump_), &h, bytes);
  }

 private:
  pcap_t* dead_;
  pcap_dumper_t* dump_;
};

Time ceil_ns(Time t) { return (t + kNanosecond - 1) / kNanosecond * kNanosecond; }

// Records each drop with the bytes of the dropped packet.
struct DropLog : DropSink {
  Dump* dump;
  std::vector<std::vector<uint8_t>>* bytes;
  void on_drop(const Packet& p, DropReason, Time now) override {
    dump->write(now, (*bytes)[p.handle].data(), (*bytes)[p.handle].size());
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: %s fifo|efd|chutq|mtqqtl TRACE RATE DEPARTURES.pcap DROPS.pcap [KEY=VALUE...]\n",
                 argv[0]);
    return 2;
  }
  const std::string core = argv[1];
  const uint64_t rate = std::strtoull(argv[3], nullptr, 10);
  if (rate == 0) die("RATE must be a positive integer");
  uint64_t capacity = 0, threshold = 30000, mtq_us = 0, qtl_us = 0;
  for (int i = 6; i < argc; ++i) {
    const std::string kv = argv[i];
    const size_t eq = kv.find('=');
    if (eq == std::string::npos) die("expected KEY=VALUE: " + kv);
    const std::string k = kv.substr(0, eq);
    const uint64_t v = std::strtoull(kv.c_str() + eq + 1, nullptr, 10);
    if (k == "capacity") capacity = v;
    else if (k == "threshold") threshold = v;
    else if (k == "mtq") mtq_us = v;
    else if (k == "qtl") qtl_us = v;
    else die("unknown key " + k);
  }

  std::vector<Frame> frames = read_trace(argv[2]);
  std::vector<std::vector<uint8_t>> bytes(frames.size());  // by handle
  std::vector<Packet> meta(frames.size());
  std::unique_ptr<QueueCore> q;
  bool chunks = false, qtl_writeback = false;

  // Build each Packet exactly as the Click adapter does.
  for (size_t i = 0; i < frames.size(); ++i) {
    Packet& p = meta[i];
    p.handle = i;
    p.arrival = frames[i].t;
    bytes[i] = frames[i].ip;
    if (core == "fifo" || core == "efd") {
      describe_ipv4(bytes[i].data(), bytes[i].size(), p);  // TLCoreQueue
    } else if (core == "chutq") {
      p.length = static_cast<uint32_t>(bytes[i].size());  // TLChunkQueue: Paint(1), BUDGETS "50 100 200"
      p.cls = 1;
      p.budget = 100 * kMicrosecond;
    } else if (core == "mtqqtl") {
      mq::Fields f;  // TLMtqQtlMark, one class
      if (mtq_us) f.mtq_us = static_cast<uint16_t>(mtq_us);
      if (qtl_us) f.qtl_ns = static_cast<uint32_t>(qtl_us * 1000);
      const size_t len = bytes[i].size();
      bytes[i].resize(len + mq::kIpv6ExtSize);
      size_t new_len = len;
      if (mq::mark(bytes[i].data(), len, bytes[i].size(), f, new_len) != mq::HeaderError::kOk)
        die("frame " + std::to_string(i) + " cannot be marked");
      bytes[i].resize(new_len);
      const uint8_t* d = bytes[i].data();  // TLMtqQtlQueue: IP total length
      const uint32_t total = uint32_t(d[2]) << 8 | d[3];
      p.length = total >= 20 && total <= new_len ? total : static_cast<uint32_t>(new_len);
      mq::Fields g;
      if (mq::decode(d, new_len, g) == mq::HeaderError::kOk) mq::to_packet(g, p);
    } else {
      die("CORE must be fifo, efd, chutq or mtqqtl");
    }
  }
  // FIFO and EFD keep the packet on the wire counted until its transmission
  // at RATE ends (algorithms.md §2, the engine's default); the elements'
  // default holds it until TLExactUnqueue pulls the next, which must give
  // the same records.
  if (core == "fifo") {
    BufferConfig c;
    c.capacity = capacity ? capacity : 300;
    c.in_service_link_bps = rate;
    q = std::make_unique<FifoCore>(c);
  } else if (core == "efd") {
    EfdConfig c;
    c.queue.buffer.capacity = capacity ? capacity : 300;
    c.queue.buffer.in_service_link_bps = rate;
    c.threshold = threshold;
    q = std::make_unique<EfdCore>(c);
  } else if (core == "chutq") {
    ChuTQConfig c;  // TLChunkQueue(chutq, CEA true), MTU 9000, 10 Gb/s
    c.cea = true;
    q = std::make_unique<ChuTQ>(c);
    chunks = true;
  } else {
    MtqQtlConfig c;
    c.link_bps = rate;
    c.capacity_packets = capacity ? capacity : 200;
    q = std::make_unique<MtqQtlQueue>(c);
    qtl_writeback = true;
  }

  Dump departures(argv[4]), drops(argv[5]);
  DropLog log;
  log.dump = &drops;
  log.bytes = &bytes;
  q->set_drop_sink(&log);
  ExactLink link(rate);
  const uint32_t batch_cap = chunks ? max_chunk_packets(9000) : 1;
  std::vector<Packet> store(batch_cap);
  std::vector<jg::PacketRef> refs(batch_cap);
  std::vector<uint8_t> wire(65536);
  Time link_timer = kNever;  // when TLExactUnqueue's Timer fires, if scheduled

  // Pull at `now` and start the packet at `start`; schedule the link Timer.
  auto pull = [&](Time now, Time start) {
    Batch b{store.data(), batch_cap};
    if (!q->dequeue(now, b)) return false;
    const uint8_t* out = nullptr;
    size_t out_len = 0;
    if (chunks) {  // TLChunkQueue encodes the chunk at the pull
      for (uint32_t i = 0; i < b.count; ++i)
        refs[i] =
            jg::PacketRef{bytes[b.packets[i].handle].data(), bytes[b.packets[i].handle].size(), b.packets[i].arrival};
      jg::FormatError e;
      out_len = jg::encode(refs.data(), b.count, now, 10 * kNanosecond, wire.data(), wire.size(), e);
      if (out_len != b.wire_bytes) die("chunk encoding differs from the core's size");
      out = wire.data();
    } else {
      std::vector<uint8_t>& pb = bytes[b.packets[0].handle];
      if (qtl_writeback && (b.packets[0].flags & kFlagHasQtl)) {
        size_t n;
        mq::mark(pb.data(), pb.size(), pb.size(), mq::from_packet(b.packets[0]), n);
      }
      out = pb.data();
      out_len = pb.size();
    }
    link.send(start, out_len);
    departures.write(now, out, out_len);
    link_timer = ceil_ns(link.busy_until());
    return true;
  };
  auto link_idle = [&](Time now) { return link_timer == kNever && link.idle_at(now); };

  size_t next = 0;
  Time now = 0;
  for (;;) {
    const Time ta = next < frames.size() ? frames[next].t : kNever;
    Time tq = kNever;  // a chunking timer, which matters only to an idle link
    if (chunks && link_timer == kNever) {
      const Time r = q->next_ready(now);
      // Ready now yet not pulled: the pull at `now` already failed.
      if (r != kNever && r > now) tq = ceil_ns(r);
    }
    const Time t = std::min(std::min(ta, tq), link_timer);
    if (t == kNever) break;
    now = t;
    if (t == link_timer) {  // timers before tasks
      link_timer = kNever;
      pull(t, link.busy_until());
    } else if (t == tq && t <= ta) {
      if (link_idle(t)) pull(t, t);
    } else {
      q->enqueue(meta[next++], t);
      if (link_idle(t)) pull(t, t);
    }
  }
  const Counters& c = q->counters();
  std::printf("offered=%llu served=%llu dropped=%llu queued=%llu\n", (unsigned long long)c.offered,
              (unsigned long long)c.served, (unsigned long long)c.dropped_total(),
              (unsigned long long)q->length_packets());
  return 0;
}
