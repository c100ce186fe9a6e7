// Writes small pcap files with hand-chosen IPv4/UDP packets for the tests.
#pragma once

#include <pcap/pcap.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace tracelab::engine::testing {

struct TestPacket {
  int64_t ns;          // timestamp, nanoseconds since the epoch
  uint16_t ip_length;  // IP total length
  uint16_t sport = 1000, dport = 2000;
  uint8_t dscp = 0;
  uint8_t src_last = 1;  // 10.0.0.<src_last> -> 10.0.1.1
};

inline std::string write_pcap(const std::string& name, const std::vector<TestPacket>& pkts) {
  const std::string path = ::testing::TempDir() + name;
  pcap_t* dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535, PCAP_TSTAMP_PRECISION_NANO);
  pcap_dumper_t* d = pcap_dump_open(dead, path.c_str());
  for (const TestPacket& p : pkts) {
    std::vector<uint8_t> f(14 + p.ip_length, 0);
    f[12] = 0x08;  // IPv4
    uint8_t* ip = f.data() + 14;
    ip[0] = 0x45;
    ip[1] = static_cast<uint8_t>(p.dscp << 2);
    ip[2] = p.ip_length >> 8;
    ip[3] = p.ip_length & 0xff;
    ip[8] = 64;
    ip[9] = 17;
    ip[12] = 10, ip[15] = p.src_last;
    ip[16] = 10, ip[18] = 1, ip[19] = 1;
    ip[20] = p.sport >> 8, ip[21] = p.sport & 0xff;
    ip[22] = p.dport >> 8, ip[23] = p.dport & 0xff;
    pcap_pkthdr h{};
    h.ts.tv_sec = p.ns / 1000000000;
    h.ts.tv_usec = p.ns % 1000000000;
    h.caplen = h.len = static_cast<uint32_t>(f.size());
    pcap_dump(reinterpret_cast<u_char*>(d), &h, f.data());
  }
  pcap_dump_close(d);
  pcap_close(dead);
  return path;
}

}  // namespace tracelab::engine::testing
