// Engine speed: one (virtual) second of a fully loaded 10 Gb/s link of
// 64-byte packets (20 bytes of preamble and inter-frame gap each: 14.88 Mpps)
// through each element, printed beside a plain FIFO in the same engine.
//
//   engine_bench [virtual_seconds=1] [element ...]
// A real-time factor >= 1 means one virtual second took at most one second.
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "engine.hh"

using namespace tracelab;
using namespace tracelab::engine;

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 1.0;
  std::vector<std::string> elements;
  for (int i = 2; i < argc; ++i) elements.push_back(argv[i]);
  if (elements.empty()) elements = {"fifo(capacity=300)"};
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
  return 0;
}
