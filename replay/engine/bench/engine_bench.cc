// Engine speed: one (virtual) second of a fully loaded 10 Gb/s link of
// 64-byte packets (20 bytes of preamble and inter-frame gap each: 14.88 Mpps)
// through each element, printed beside a plain FIFO in the same engine and,
// where Click and the tracelab package are installed, beside Click
// `--simtime` running the equivalent package configuration.
//
//   engine_bench [virtual_seconds=1] [element ...]
//
// A real-time factor >= 1 means one virtual second took at most one second.
// Click is found through $CLICKPREFIX (bin/click) and the package through
// $TRACELAB_CLICK_PACKAGE (the directory holding tracelab.uo); without them
// the Click rows print SKIPPED with the reason.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <sys/stat.h>
#include <vector>

#include "engine.hh"

using namespace tracelab;
using namespace tracelab::engine;

namespace {

bool is_file(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The package element equivalent to an engine element, or "" if none.
std::string click_element(const std::string& element) {
  if (element.rfind("fifo", 0) == 0) return "TLFifoQueue(CAPACITY 300)";
  if (element.rfind("efd", 0) == 0) return "TLEfdQueue(CAPACITY 300, VARIANT befd, THRESHOLD 30000)";
  if (element.rfind("chutq", 0) == 0) return "TLChunkQueue(chutq)";
  return "";
}

// Click --simtime: RatedSource paces 64-byte IP packets at 14.88 Mpps of
// simulated time into the element, TLExactUnqueue serializes them; 64 B of
// IP at 10 Gb/s x 64/84 take the 67.2 ns of 84 B on the wire, as in the
// engine. One UDP flow: Click has no stock paced many-flow source.
void click_row(const std::string& element, double seconds) {
  const char* prefix = std::getenv("CLICKPREFIX");
  const char* package = std::getenv("TRACELAB_CLICK_PACKAGE");
  const std::string label = "click --simtime " + element;
  if (!prefix || !is_file(std::string(prefix) + "/bin/click")) {
    std::printf("%-44s SKIPPED (no Click installation: set CLICKPREFIX)\n", label.c_str());
    return;
  }
  if (!package || !is_file(std::string(package) + "/tracelab.uo")) {
    std::printf("%-44s SKIPPED (tracelab Click package not built: set TRACELAB_CLICK_PACKAGE)\n", label.c_str());
    return;
  }
  const std::string ce = click_element(element);
  if (ce.empty()) {
    std::printf("%-44s SKIPPED (no equivalent package element)\n", label.c_str());
    return;
  }
  const unsigned long long n = static_cast<unsigned long long>(seconds * 14880952.0 + 0.5);
  const std::string conf =
      "require(package \"tracelab\"); "
      "RatedSource(LENGTH 36, RATE 14880952, LIMIT " + std::to_string(n) + ", STOP true) "
      "-> UDPIPEncap(10.0.0.1, 1234, 10.0.0.2, 5678) -> in :: Counter -> " + ce +
      " -> TLExactUnqueue(RATE 7619047619)" + (element.rfind("chutq", 0) == 0 ? " -> TLDechunk" : "") +
      " -> out :: Counter -> Discard; "
      "DriverManager(pause, wait 1ms, print \"in=$(in.count) out=$(out.count)\", stop);";
  const std::string cmd = "CLICKPATH='" + std::string(package) + ":" + prefix + "/lib:" + prefix +
                          "/share/click' '" + prefix + "/bin/click' --simtime -e '" + conf + "' 2>&1";
  const auto t0 = std::chrono::steady_clock::now();
  FILE* f = popen(cmd.c_str(), "r");
  if (!f) {
    std::printf("%-44s SKIPPED (cannot start click)\n", label.c_str());
    return;
  }
  char line[512];
  unsigned long long in = 0, out = 0;
  std::string text;
  while (std::fgets(line, sizeof line, f)) {
    text += line;
    std::sscanf(line, "in=%llu out=%llu", &in, &out);
  }
  const int rc = pclose(f);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (rc != 0 || in == 0) {
    std::printf("%-44s FAILED (exit %d): %s\n", label.c_str(), rc, text.c_str());
    return;
  }
  // Click's paced source is not the engine's CBR: say so when the runs
  // differ (packets lost in Click but not in the engine) rather than print
  // a rate that looks comparable.
  const double lost = 1.0 - static_cast<double>(out) / static_cast<double>(in);
  std::printf("%-44s %12llu %10.3f %10.2f %8.2f %10s %8s  out %llu%s\n", label.c_str(), in, wall, in / wall / 1e6,
              seconds / wall, "-", "-", out, lost > 0.01 ? "  NOT EQUIVALENT: Click lost packets" : "");
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 1.0;
  std::vector<std::string> elements;
  for (int i = 2; i < argc; ++i) elements.push_back(argv[i]);
  if (elements.empty()) elements = {"fifo(capacity=300)", "efd(capacity=300)", "chutq(policy=dcf)"};
  const Time stop = static_cast<Time>(seconds * 1e12);
  std::printf("%-44s %12s %10s %10s %8s %10s %8s\n", "element", "packets", "wall_s", "Mpps", "RTF", "cpu_s",
              "RTF_cpu");
  for (const std::string& element : elements) {
    RunConfig cfg;
    // 64 B + 20 B overhead at 10 Gb/s: one packet every 67.2 ns, exactly.
    cfg.sources = {"cbr(interval=67200ps, size=64, flows=1000, stop=" + std::to_string(stop) + "ps)"};
    cfg.nodes = {NodeConfig{element, 10000000000ULL, 0, 20}};
    // Quantiles from the histogram (0.2 %): 15 M exact samples per
    // distribution would measure the memory system, not the engine.
    cfg.max_delay_samples = 0;
    try {
      Engine engine(cfg);
      const std::clock_t cpu0 = std::clock();
      RunResult r = engine.run();
      // CPU time beside wall time: on a shared machine the wall clock also
      // measures the neighbours.
      const double cpu = static_cast<double>(std::clock() - cpu0) / CLOCKS_PER_SEC;
      std::printf("%-44s %12llu %10.3f %10.2f %8.2f %10.3f %8.2f\n", element.c_str(),
                  static_cast<unsigned long long>(r.offered), r.wall_seconds, r.wall_mpps,
                  seconds / r.wall_seconds, cpu, seconds / cpu);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: %s\n", element.c_str(), e.what());
      return 1;
    }
  }
  for (const std::string& element : elements) click_row(element, seconds);
  return 0;
}
