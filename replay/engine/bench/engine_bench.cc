// Engine speed: one (virtual) second of a fully loaded 10 Gb/s link of
// 64-byte packets (20 bytes of preamble and inter-frame gap each: 14.88 Mpps)
// through each element, printed beside a plain FIFO in the same engine and,
// where Click and the tracelab package are installed, beside Click
// `--simtime` running the equivalent package configuration.
//
//   engine_bench [--json PATH] [virtual_seconds=1] [element ...]
//
// Without elements it runs every element of the engine at its defaults
// (300-packet buffers). --json also writes the engine rows as JSON
// (scripts/bench.py reads it).
//
// A real-time factor >= 1 means one virtual second took at most one second.
// RTF_cpu divides by CPU time instead of wall time: on a shared machine the
// wall clock also measures the neighbours.
//
// The Click rows: Click has no source that paces like the engine's CBR
// (RatedSource under --simtime loses packets the engine does not), so the
// bench writes the CBR stream as a nanosecond pcap (64-byte IPv4/UDP
// packets in Ethernet, 1000 flows round robin, packet i at i x 67.2 ns
// rounded to the nanosecond the format holds) and runs BOTH on that file:
// the engine's pcap source into the element and its 10 Gb/s link, and
// `click --simtime` with FromDump(TIMING true) into the package element and
// TLExactUnqueue(RATE 10 Gb/s, EXTRA 20). The rate ratio is printed only if
// both offered, delivered and dropped the same numbers of packets; else the
// row says NOT EQUIVALENT with the counts. Click is found through
// $CLICKPREFIX (bin/click) and the package through $TRACELAB_CLICK_PACKAGE
// (the directory holding tracelab.uo); without them the rows print SKIPPED
// with the reason. The pcap goes to $TMPDIR (default /tmp) and is removed.
#include <pcap/pcap.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "chunk_format.hh"
#include "engine.hh"

using namespace tracelab;
using namespace tracelab::engine;

namespace {

constexpr Time kGap = 67200;  // ps: 64 B + 20 B at 10 Gb/s
constexpr uint32_t kFlows = 1000;
// Real time with room to spare: one virtual second in at most 2/3 s of CPU.
constexpr double kTargetRtf = 1.5;

bool is_file(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

double cpu_seconds(int who) {
  rusage ru{};
  getrusage(who, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

void print_row(const std::string& label, uint64_t packets, double wall, double cpu, double seconds,
               const std::string& note = "") {
  std::printf("%-44s %12llu %10.3f %10.2f %8.2f %10.3f %8.2f%s\n", label.c_str(),
              static_cast<unsigned long long>(packets), wall, static_cast<double>(packets) / wall / 1e6, seconds / wall,
              cpu, seconds / cpu, note.c_str());
}

struct Outcome {
  uint64_t offered = 0, delivered = 0, dropped = 0;
  double wall = 0, cpu = 0;
};

// One engine run; CPU time of this process around it.
Outcome run_engine(const std::string& source, const std::string& element, const std::vector<ClassConfig>& classes) {
  RunConfig cfg;
  cfg.sources = {source};
  cfg.nodes = {NodeConfig{element, 10000000000ULL, 0, 20}};
  cfg.classes = classes;
  // Quantiles from the histogram (0.2 %): 15 M exact samples per
  // distribution would measure the memory system, not the engine.
  cfg.max_delay_samples = 0;
  Engine engine(cfg);
  const double cpu0 = cpu_seconds(RUSAGE_SELF);
  const RunResult r = engine.run();
  return {r.offered, r.delivered, r.dropped, r.wall_seconds, cpu_seconds(RUSAGE_SELF) - cpu0};
}

// The Click rows' stream as a nanosecond Ethernet pcap: the engine rows' rate and sizes, with
// the 1000 flows taken round robin (the engine rows' cbr source draws each packet's flow at
// random); both sides of a Click row read this file, so they see the same flows.
void write_stream(const std::string& path, uint64_t packets) {
  pcap_t* dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535, PCAP_TSTAMP_PRECISION_NANO);
  pcap_dumper_t* out = dead ? pcap_dump_open(dead, path.c_str()) : nullptr;
  if (!out) throw std::runtime_error("cannot write " + path + (dead ? ": " + std::string(pcap_geterr(dead)) : ""));
  uint8_t f[78] = {0x02, 0, 0,    0,    0, 2,  0x02, 0, 0,  0,  0, 1, 0x08, 0x00,                     // Ethernet, IPv4
                   0x45, 0, 0,    64,   0, 0,  0,    0, 64, 17, 0, 0, 10,   0,    0, 1, 10, 0, 0, 2,  // IPv4, 64 B, UDP
                   0,    0, 0x16, 0x2e, 0, 44, 0,    0};                                              // UDP to 5678
  // IPv4 header checksum: the ports vary, the IP header does not.
  tracelab::jg::wr16(f + 24, tracelab::jg::internet_checksum(f + 14, 20));
  pcap_pkthdr h{};
  h.caplen = h.len = sizeof f;
  for (uint64_t i = 0; i < packets; ++i) {
    const uint64_t ns = (i * static_cast<uint64_t>(kGap) + 500) / 1000;
    h.ts.tv_sec = static_cast<time_t>(ns / 1000000000ULL);
    h.ts.tv_usec = static_cast<suseconds_t>(ns % 1000000000ULL);  // nanoseconds in a nano dump
    const uint32_t port = 1024 + static_cast<uint32_t>(i % kFlows);
    f[34] = static_cast<uint8_t>(port >> 8);
    f[35] = static_cast<uint8_t>(port);
    pcap_dump(reinterpret_cast<u_char*>(out), &h, f);
  }
  pcap_dump_close(out);
  pcap_close(dead);
}

// The package configuration equivalent to an engine element, or "" if none.
// ChuTQ: class 0 (Paint) with a 50 us budget on both sides.
std::string click_element(const std::string& element) {
  if (element == "fifo(capacity=300)") return "TLFifoQueue(CAPACITY 300)";
  if (element == "efd(capacity=300)") return "TLEfdQueue(CAPACITY 300, VARIANT befd, THRESHOLD 30000)";
  if (element == "chutq(policy=dcf)") return "Paint(0) -> q :: TLChunkQueue(chutq, POLICY dcf, BUDGETS \"50\")";
  return "";
}

Outcome run_click(const std::string& prefix, const std::string& package, const std::string& pcap,
                  const std::string& element, std::string& text) {
  const bool chunks = element.rfind("chutq", 0) == 0;
  std::string ce = click_element(element);
  if (!chunks) ce = "q :: " + ce;
  const std::string conf = "require(package \"tracelab\"); FromDump(" + pcap +
                           ", STOP true, TIMING true) -> Strip(14) -> MarkIPHeader -> in :: Counter -> " + ce +
                           " -> TLExactUnqueue(RATE 10000000000, EXTRA 20)" + (chunks ? " -> TLDechunk" : "") +
                           " -> out :: Counter -> Discard; DriverManager(pause, wait 1ms, "
                           "print \"in=$(in.count) out=$(out.count) drops=$(q.drops)\", stop);";
  const std::string cmd = "CLICKPATH='" + package + ":" + prefix + "/lib:" + prefix + "/share/click' '" + prefix +
                          "/bin/click' --simtime -e '" + conf + "' 2>&1";
  Outcome o;
  const double cpu0 = cpu_seconds(RUSAGE_CHILDREN);
  const auto t0 = std::chrono::steady_clock::now();
  FILE* f = popen(cmd.c_str(), "r");
  if (!f) return o;
  char line[512];
  unsigned long long in = 0, out = 0, drops = 0;
  while (std::fgets(line, sizeof line, f)) {
    text += line;
    std::sscanf(line, "in=%llu out=%llu drops=%llu", &in, &out, &drops);
  }
  const int rc = pclose(f);
  o.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  o.cpu = cpu_seconds(RUSAGE_CHILDREN) - cpu0;
  if (rc != 0) return Outcome{};
  o.offered = in;
  o.delivered = out;
  o.dropped = drops;
  return o;
}

void click_rows(const std::vector<std::string>& elements, double seconds) {
  const char* prefix = std::getenv("CLICKPREFIX");
  const char* package = std::getenv("TRACELAB_CLICK_PACKAGE");
  std::string skip;
  if (!prefix || !is_file(std::string(prefix) + "/bin/click")) skip = "no Click installation: set CLICKPREFIX";
  else if (!package || !is_file(std::string(package) + "/tracelab.uo"))
    skip = "tracelab Click package not built: set TRACELAB_CLICK_PACKAGE";
  if (!skip.empty()) {
    for (const std::string& e : elements)
      std::printf("%-44s SKIPPED (%s)\n", ("click --simtime " + e).c_str(), skip.c_str());
    return;
  }
  const char* tmp = std::getenv("TMPDIR");
  const std::string pcap =
      std::string(tmp && *tmp ? tmp : "/tmp") + "/tracelab_bench_" + std::to_string(getpid()) + ".pcap";
  const uint64_t packets = static_cast<uint64_t>(static_cast<double>(seconds * 1e12) / kGap) + 1;
  write_stream(pcap, packets);
  for (const std::string& element : elements) {
    const std::string label = "click --simtime " + element;
    if (click_element(element).empty()) {
      std::printf("%-44s SKIPPED (no equivalent package element)\n", label.c_str());
      continue;
    }
    std::vector<ClassConfig> classes;
    if (element.rfind("chutq", 0) == 0) classes = {{"c0", 50 * kMicrosecond}};
    const Outcome eng = run_engine("pcap(path=" + pcap + ")", element, classes);
    print_row("engine pcap " + element, eng.offered, eng.wall, eng.cpu, seconds);
    std::string text;
    const Outcome clk = run_click(prefix, package, pcap, element, text);
    if (clk.offered == 0) {
      std::printf("%-44s FAILED: %s\n", label.c_str(), text.c_str());
      continue;
    }
    char note[200];
    if (clk.offered != eng.offered || clk.delivered != eng.delivered || clk.dropped != eng.dropped) {
      std::snprintf(note, sizeof note, "  NOT EQUIVALENT: click in/out/drops %llu/%llu/%llu, engine %llu/%llu/%llu",
                    static_cast<unsigned long long>(clk.offered), static_cast<unsigned long long>(clk.delivered),
                    static_cast<unsigned long long>(clk.dropped), static_cast<unsigned long long>(eng.offered),
                    static_cast<unsigned long long>(eng.delivered), static_cast<unsigned long long>(eng.dropped));
    } else {
      std::snprintf(note, sizeof note, "  same out/drops %llu/%llu; engine/click %.1fx (CPU)",
                    static_cast<unsigned long long>(clk.delivered), static_cast<unsigned long long>(clk.dropped),
                    clk.cpu / eng.cpu);
    }
    print_row(label, clk.offered, clk.wall, clk.cpu, seconds, note);
  }
  std::remove(pcap.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 1.0;
  const char* json_path = nullptr;
  std::vector<std::string> elements;
  int positional = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
      json_path = argv[++i];
    } else if (positional++ == 0) {
      seconds = std::atof(argv[i]);
    } else {
      elements.push_back(argv[i]);
    }
  }
  // Every element of the engine, at the spec's default parameters.
  if (elements.empty())
    elements = {"fifo(capacity=300)",
                "efd(capacity=300)",
                "pefd(capacity=300)",
                "efdack(capacity=300)",
                "run2c(capacity=300)",
                "run2cack(capacity=300)",
                "sift(capacity=300)",
                "xprotect(capacity=300)",
                "las(capacity=300)",
                "lasack(capacity=300)",
                "lars(capacity=300)",
                "scfq(capacity=300)",
                "ncq",
                "ncqplus",
                "basicq",
                "chumq",
                "chutq(policy=dcf)",
                "mtqqtl"};
  if (!(seconds > 0)) {
    std::fprintf(stderr, "engine_bench: virtual_seconds must be positive\n");
    return 2;
  }
  const Time stop = static_cast<Time>(seconds * 1e12);
  std::printf("%-44s %12s %10s %10s %8s %10s %8s\n", "element", "packets", "wall_s", "Mpps", "RTF", "cpu_s", "RTF_cpu");
  std::string json = "{\"virtual_seconds\": " + std::to_string(seconds) +
                     ", \"target_rtf\": " + std::to_string(kTargetRtf) + ", \"elements\": [";
  try {
    for (const std::string& element : elements) {
      // 64 B + 20 B overhead at 10 Gb/s: one packet every 67.2 ns, exactly.
      const Outcome o =
          run_engine("cbr(interval=67200ps, size=64, flows=1000, stop=" + std::to_string(stop) + "ps)", element, {});
      print_row(element, o.offered, o.wall, o.cpu, seconds);
      char row[320];
      std::snprintf(row, sizeof row,
                    "%s{\"element\": \"%s\", \"packets\": %llu, \"wall_s\": %.6f, \"cpu_s\": %.6f, "
                    "\"rtf\": %.3f, \"rtf_cpu\": %.3f}",
                    json.back() == '[' ? "" : ", ", element.c_str(), static_cast<unsigned long long>(o.offered), o.wall,
                    o.cpu, seconds / o.wall, seconds / o.cpu);
      json += row;
    }
    std::printf("target: RTF_cpu >= %.1f for every element (10 Gb/s of 64 B packets, 14.88 Mpps)\n", kTargetRtf);
    click_rows(elements, seconds);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "engine_bench: %s\n", e.what());
    return 1;
  }
  json += "]}\n";
  if (json_path != nullptr) {
    std::FILE* f = std::fopen(json_path, "w");
    if (f == nullptr || std::fputs(json.c_str(), f) < 0 || std::fclose(f) != 0) {
      std::fprintf(stderr, "engine_bench: cannot write %s\n", json_path);
      return 4;
    }
  }
  return 0;
}
