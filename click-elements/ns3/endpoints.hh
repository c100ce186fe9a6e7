// What the scenario programs (tl-ns3-dumbbell, the model replay) need of a
// connection's endpoints: which connection a bottleneck item belongs to (its
// transport ports), and freeing a finished TCP connection's endpoint.
//
// ns-3 keeps a finished connection's endpoints for the rest of the run (a
// listener; a socket in TIME_WAIT for 240 s), and Ipv4EndPointDemux::Lookup
// scans all of a node's endpoints for every packet: a run's time grew with
// the square of its connections. TcpSocketBase's own teardown of a closed
// socket frees them; it is protected, so it is reached through a derived
// class. When a program may call it is the program's to say (after the last
// packet that could reach the endpoint).
#ifndef TRACELAB_NS3_ENDPOINTS_HH
#define TRACELAB_NS3_ENDPOINTS_HH

#include <cstdint>

#include "ns3/ipv4-queue-disc-item.h"
#include "ns3/tcp-socket-base.h"

namespace tracelab::scenario {

struct EndpointRelease : ns3::TcpSocketBase {
  // Cancels the socket's timers and frees its endpoint; sends nothing.
  static void Release(ns3::Ptr<ns3::Socket> socket) {
    ns3::Ptr<ns3::TcpSocketBase> tcp = ns3::DynamicCast<ns3::TcpSocketBase>(socket);
    if (tcp) ((*tcp).*(&EndpointRelease::DeallocateEndPoint))();
  }
};

// The source and destination ports of an IPv4 item carrying TCP (or, with
// `udp_too`, UDP); false for anything else. Read from the segment's first
// bytes: deserializing a TcpHeader creates an Object per TCP option, which
// made a per-packet lookup cost a fifth of a dumbbell run.
inline bool ItemPorts(ns3::Ptr<const ns3::QueueDiscItem> item, bool udp_too, uint32_t& src, uint32_t& dst) {
  ns3::Ptr<const ns3::Ipv4QueueDiscItem> ip = ns3::DynamicCast<const ns3::Ipv4QueueDiscItem>(item);
  if (!ip) return false;
  const uint8_t protocol = ip->GetHeader().GetProtocol();
  if (protocol != 6 && !(udp_too && protocol == 17)) return false;
  uint8_t ports[4];  // source and destination port, big-endian
  if (ip->GetPacket()->CopyData(ports, sizeof ports) != sizeof ports) return false;
  src = uint32_t(ports[0]) << 8 | ports[1];
  dst = uint32_t(ports[2]) << 8 | ports[3];
  return true;
}

}  // namespace tracelab::scenario

#endif  // TRACELAB_NS3_ENDPOINTS_HH
