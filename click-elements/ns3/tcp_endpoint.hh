// Freeing a finished TCP connection's endpoint in the scenario programs
// (tl-ns3-dumbbell, the model replay). ns-3 keeps a finished connection's
// endpoints for the rest of the run (a listener; a socket in TIME_WAIT for
// 240 s), and Ipv4EndPointDemux::Lookup scans all of a node's endpoints for
// every packet: a run's time grew with the square of its connections.
// TcpSocketBase's own teardown of a closed socket frees them; it is
// protected, so it is reached through a derived class. When a program may
// call it is the program's to say (after the last packet that could reach
// the endpoint).
#ifndef TRACELAB_NS3_TCP_ENDPOINT_HH
#define TRACELAB_NS3_TCP_ENDPOINT_HH

#include "ns3/tcp-socket-base.h"

namespace tracelab::scenario {

struct EndpointRelease : ns3::TcpSocketBase {
  // Cancels the socket's timers and frees its endpoint; sends nothing.
  static void Release(ns3::Ptr<ns3::Socket> socket) {
    ns3::Ptr<ns3::TcpSocketBase> tcp = ns3::DynamicCast<ns3::TcpSocketBase>(socket);
    if (tcp) ((*tcp).*(&EndpointRelease::DeallocateEndPoint))();
  }
};

}  // namespace tracelab::scenario

#endif  // TRACELAB_NS3_TCP_ENDPOINT_HH
