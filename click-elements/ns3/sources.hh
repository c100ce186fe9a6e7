// The seed experiments' traffic sources as ns-3 applications, as
// docs/reference/experiments.md states them (E-NCQ-0, [001 §4]):
//
// * VoIP, G.711 64 kb/s: ON/OFF with Pareto holding times (shape 1.5, means
//   1.0 s ON and 1.35 s OFF), 140-byte IP packets sent at 64 kb/s while ON
//   (one every 17.5 ms);
// * sensors: 40-byte IP packets every 50 ms between a start and a stop time,
//   TlSensorWindow's deterministic pattern;
// * FTP: an unlimited BulkSend over the node's TCP (the scenario picks
//   NewReno and the segment size);
// * Bernoulli packet errors on a device (RateErrorModel, packet unit).
//
// The UDP sources are TlOnOffUdpSource: a packet is due each time the time
// spent ON adds up to another interval (the remainder carries over an OFF
// period), so the long-run rate is the ON rate times the ON share exactly.
// Each packet's payload starts with a SeqTsHeader (sequence number, send
// time: 12 bytes, which is why an IP packet is at least 40 bytes): the
// receiver's delay and loss need no other state. Every random variable is
// on a stream the caller assigns, so a run is fixed by RngSeed/RngRun and
// two runs with different queues draw the same ON/OFF periods.
#pragma once

#include <cstdint>
#include <utility>

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/network-module.h"

namespace ns3 {

// IPv4 + UDP header bytes: a UDP source's IP packet is its payload + this.
constexpr uint32_t kTlUdpIpHeaders = 28;

struct TlVoipParams {
  uint32_t ip_bytes = 140;    // 15 ms of G.711 speech + 20-byte header ([001 §4])
  uint64_t rate_bps = 64000;  // IP bits per second while ON
  double on_mean_s = 1.0;
  double off_mean_s = 1.35;
  double shape = 1.5;  // Pareto shape of both holding times
  Time Interval() const { return Seconds(double(ip_bytes) * 8 / double(rate_bps)); }
};

struct TlSensorParams {
  uint32_t ip_bytes = 40;  // 20 bytes of sensor data + 20-byte header ([001 §4])
  Time interval = MilliSeconds(50);
};

// UDP packets of `ip_bytes` to one address, one per `interval` of ON time;
// ON and OFF durations from two random variables (no ON variable: always ON
// from start to stop). The first period is OFF when there is an OFF variable.
class TlOnOffUdpSource : public Application {
 public:
  static TypeId GetTypeId();
  void Configure(const Address& to, uint32_t ip_bytes, Time interval, Ptr<RandomVariableStream> on,
                 Ptr<RandomVariableStream> off);
  int64_t AssignStreams(int64_t stream) override;
  uint64_t GetSent() const { return m_seq; }

 private:
  void StartApplication() override;
  void StopApplication() override;
  void BeginOn();
  void EndOn();
  void Send();

  Address m_to;
  uint32_t m_ipBytes = 0;
  Time m_interval;
  Ptr<RandomVariableStream> m_on, m_off;
  Ptr<Socket> m_socket;
  Time m_onEnd;      // end of the current ON period (Time::Max() when always ON)
  Time m_nextSend;   // while ON: when the next packet is due
  Time m_untilNext;  // while OFF: ON time still needed before the next packet
  EventId m_sendEvent, m_toggleEvent;
  uint32_t m_seq = 0;
  TracedCallback<Ptr<const Packet>> m_txTrace;
};

// The sources, installed on `node` and sending to `to` (an InetSocketAddress).
// `stream`: the first of the 2 RNG streams the VoIP source uses.
Ptr<TlOnOffUdpSource> TlInstallVoip(Ptr<Node> node, const Address& to, const TlVoipParams& p, int64_t stream);
Ptr<TlOnOffUdpSource> TlInstallSensor(Ptr<Node> node, const Address& to, const TlSensorParams& p, Time start,
                                      Time stop);
Ptr<BulkSendApplication> TlInstallFtp(Ptr<Node> node, const Address& to, uint32_t segment);

// Sensor i of n over a run of `duration` seconds is active for half of it,
// from duration/8 + (duration/4)·i/n: the aggregate rate rises over
// [T/8, 3T/8), stays at n sensors over [3T/8, 5T/8) and falls over
// [5T/8, 7T/8) (the seed: "alternating periods of increasing, constant and
// decreasing sensor data rate", each sensor active 30 s of 60). Returns
// (start, stop) in seconds.
std::pair<double, double> TlSensorWindow(uint32_t i, uint32_t n, double duration);

// Bernoulli packet errors at `rate` on what `dev` receives (a point-to-point
// device's ReceiveErrorModel), on RNG stream `stream`.
void TlAddPacketErrors(Ptr<NetDevice> dev, double rate, int64_t stream);

}  // namespace ns3
