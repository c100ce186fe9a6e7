// Micro-benchmark of the §1–§4 cores and of the chunking and MTQ/QTL cores
// that sit on PacketRing (BasiCQ, ChuMQ, MTQ/QTL): nanoseconds per packet for
// one enqueue plus one dequeue, through the QueueCore interface the engine
// uses, with FIFO beside each core as the reference.
//
// Workload (seeded, generated before timing): 2000 concurrently active
// flows; each flow's size in packets is bounded Pareto (alpha 1.1, 1 to
// 10 000 packets), a finished flow is replaced by a new one, and each packet
// belongs to an active flow picked uniformly, so long flows interleave with
// many short ones. The queue (300 packets) is offered 10 % more than it
// serves, so it runs full and the drop / push-out paths are timed too.
// Each measurement is the best of 3 runs, timed in the thread's CPU time
// (CLOCK_THREAD_CPUTIME_ID): on a shared machine wall-clock time also
// counts the slices other processes run in; the CPU time does not, and on
// an idle machine the two agree.
//
// Instruction counts, which do not depend on the machine's load: build with
// -g and run, e.g.,
//   valgrind --tool=callgrind core_bench --quick --once --only "EFD ("
// then callgrind_annotate --inclusive=yes: the inclusive Ir of the core's
// enqueue and dequeue over 400 000 offered packets (2 x 200 000).
//
// Each core's 64-byte figure is printed beside its budget: a 10 Gb/s link
// carries a 64-byte packet (plus 20 bytes of preamble and gap) every
// 67.2 ns, and one enqueue plus one dequeue must leave room for the rest of
// a pipeline: 40 ns for every core, 20 ns for the simple ones (FIFO, EFD,
// NCQ+). "x budget" > 1 means over budget.
//
// Usage: core_bench [--quick] [--once] [--only NAME] [--json PATH]
//   --quick      200 000 packets per run instead of 2 000 000 (CI smoke)
//   --once       one run per measurement instead of the best of 3 (for
//                instruction counts under valgrind --tool=callgrind)
//   --only NAME  time only FIFO and the cores whose names start with NAME
//   --json PATH  also write the figures as JSON (scripts/bench.py reads it)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "basicq.hh"
#include "chumq.hh"
#include "efd.hh"
#include "fifo.hh"
#include "lars.hh"
#include "las.hh"
#include "mtq_qtl.hh"
#include "ncq.hh"
#include "run2c.hh"
#include "scfq.hh"
#include "sift.hh"
#include "xprotect.hh"

namespace {
using namespace tracelab;

std::vector<Packet> make_trace(size_t n, uint32_t length, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double alpha = 1.1, lo = 1, hi = 10000;
  auto flow_size = [&] {  // inverse CDF of the bounded Pareto
    double x = u(rng);
    double v = -(x * std::pow(hi, alpha) - x * std::pow(lo, alpha) - std::pow(hi, alpha)) / (std::pow(hi * lo, alpha));
    return static_cast<uint64_t>(std::pow(v, -1.0 / alpha));
  };
  const size_t active = 2000;
  std::vector<uint64_t> id(active), left(active);
  uint64_t next_id = 0;
  for (size_t i = 0; i < active; ++i) {
    id[i] = rng();
    left[i] = flow_size();
    ++next_id;
  }
  std::vector<Packet> trace(n);
  for (size_t i = 0; i < n; ++i) {
    size_t f = rng() % active;
    Packet& p = trace[i];
    p.handle = i;
    p.flow_hash = p.conn_hash = id[f];
    p.length = length;
    p.flags = kFlagTcp;
    if (--left[f] == 0) {
      id[f] = rng();
      left[f] = flow_size();
    }
  }
  return trace;
}

double thread_cpu_ns() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

// ns per offered packet; `checksum` keeps the work observable.
double run(QueueCore& q, const std::vector<Packet>& trace, uint64_t& checksum) {
  Packet out_storage[1];
  Batch out{out_storage, 1};
  const Time step = serialization_time(trace[0].length, 10'000'000'000ULL);
  Time now = 0;
  const double start = thread_cpu_ns();
  for (size_t i = 0; i < trace.size(); ++i) {
    q.enqueue(trace[i], now);
    // Serve 10 of every 11 arrivals: a 10 % overload.
    if (i % 11 != 10 && q.dequeue(now, out)) checksum += out.packets[0].handle;
    now += step;
  }
  return (thread_cpu_ns() - start) / static_cast<double>(trace.size());
}

struct Entry {
  const char* name;
  double budget_ns;  // per 64-byte packet (see the header comment)
  std::function<std::unique_ptr<QueueCore>()> make;
};

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  int runs = 3;
  std::string only;
  const char* json_path = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strcmp(argv[i], "--once") == 0) {
      runs = 1;
    } else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      only = argv[++i];
    } else if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
      json_path = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--once] [--only NAME] [--json PATH]\n", argv[0]);
      return 2;
    }
  }
  const size_t n = quick ? 200000 : 2000000;

  EfdConfig las_las;
  las_las.queue.high = las_las.queue.low = Discipline::kLas;
  // The PacketRing users at the same 300-packet buffer and 10 Gb/s link.
  BasiCQConfig basicq;
  basicq.capacity_packets = 300;
  ChuMQConfig chumq;
  chumq.capacity_packets = 300;
  MtqQtlConfig mtq;
  mtq.capacity_packets = 300;
  mtq.link_bps = 10'000'000'000ULL;
  const std::vector<Entry> cores = {
      {"FIFO", 20, [] { return std::make_unique<FifoCore>(); }},
      {"EFD (BEFD)", 20, [] { return std::make_unique<EfdCore>(); }},
      {"PEFD", 40, [] { return std::make_unique<EfdCore>(EfdConfig::pefd()); }},
      {"EFDACK", 40, [] { return std::make_unique<EfdCore>(EfdConfig::efdack()); }},
      {"EFD LAS+LAS", 40, [las_las] { return std::make_unique<EfdCore>(las_las); }},
      {"Run2C", 40, [] { return std::make_unique<Run2cCore>(); }},
      {"SIFT", 40, [] { return std::make_unique<SiftCore>(); }},
      {"X-Protect", 40, [] { return std::make_unique<XProtectCore>(); }},
      {"LAS", 40, [] { return std::make_unique<LasCore>(); }},
      {"LARS", 40, [] { return std::make_unique<LarsCore>(); }},
      {"SCFQ", 40, [] { return std::make_unique<ScfqCore>(); }},
      {"NCQ+", 20, [] { return std::make_unique<NcqCore>(); }},
      {"BasiCQ", 40, [basicq] { return std::make_unique<BasiCQ>(basicq); }},
      {"ChuMQ", 40, [chumq] { return std::make_unique<ChuMQ>(chumq); }},
      {"MTQ/QTL", 40, [mtq] { return std::make_unique<MtqQtlQueue>(mtq); }},
  };

  const uint32_t sizes[2] = {64, 1500};
  std::vector<Packet> traces[2] = {make_trace(n, 64, 1), make_trace(n, 1500, 1)};
  uint64_t checksum = 0;
  auto best_of_3 = [&](const Entry& e, const std::vector<Packet>& t) {
    double best = 1e300;
    for (int r = 0; r < runs; ++r) {
      auto q = e.make();
      best = std::min(best, run(*q, t, checksum));
    }
    return best;
  };
  double fifo[2] = {best_of_3(cores[0], traces[0]), best_of_3(cores[0], traces[1])};

  std::printf("%u packets per run, 300-packet buffer, 10 %% overload, best of %d (thread CPU time)\n",
              static_cast<unsigned>(n), runs);
  std::printf("%-14s %10s %8s %8s %8s %8s %10s %8s\n", "core", "64B ns/pkt", "budget", "x budget", "x FIFO", "Mpps",
              "1500B ns", "x FIFO");
  std::string json = "{\"packets_per_run\": " + std::to_string(n) + ", \"runs\": " + std::to_string(runs) +
                     ", \"buffer_packets\": 300, \"overload\": 0.1, \"cores\": [";
  for (const Entry& e : cores) {
    if (&e != &cores[0] && std::string(e.name).rfind(only, 0) != 0) continue;
    double ns[2];
    for (int s = 0; s < 2; ++s) ns[s] = &e == &cores[0] ? fifo[s] : best_of_3(e, traces[s]);
    std::printf("%-14s %10.1f %8.0f %8.2f %8.2f %8.1f %10.1f %8.2f\n", e.name, ns[0], e.budget_ns, ns[0] / e.budget_ns,
                ns[0] / fifo[0], 1000.0 / ns[0], ns[1], ns[1] / fifo[1]);
    char row[256];
    std::snprintf(row, sizeof row,
                  "%s{\"core\": \"%s\", \"ns_64B\": %.2f, \"budget_ns_64B\": %.0f, \"ns_1500B\": %.2f, "
                  "\"x_fifo_64B\": %.3f}",
                  json.back() == '[' ? "" : ", ", e.name, ns[0], e.budget_ns, ns[1], ns[0] / fifo[0]);
    json += row;
  }
  std::printf("budget: a 64 B packet every 67.2 ns at 10 Gb/s; sizes %u/%u B; checksum %llu\n", sizes[0], sizes[1],
              static_cast<unsigned long long>(checksum));
  json += "]}\n";
  if (json_path != nullptr) {
    std::FILE* f = std::fopen(json_path, "w");
    if (f == nullptr || std::fputs(json.c_str(), f) < 0 || std::fclose(f) != 0) {
      std::fprintf(stderr, "core_bench: cannot write %s\n", json_path);
      return 4;
    }
  }
  return 0;
}
