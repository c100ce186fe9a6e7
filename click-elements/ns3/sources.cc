#include "sources.hh"

#include <algorithm>

#include "ns3/internet-module.h"
#include "ns3/point-to-point-module.h"

namespace ns3 {

NS_OBJECT_ENSURE_REGISTERED(TlOnOffUdpSource);

TypeId TlOnOffUdpSource::GetTypeId() {
  static TypeId tid =
      TypeId("ns3::TlOnOffUdpSource")
          .SetParent<Application>()
          .SetGroupName("Applications")
          .AddConstructor<TlOnOffUdpSource>()
          .AddTraceSource("Tx", "a packet handed to the UDP socket",
                          MakeTraceSourceAccessor(&TlOnOffUdpSource::m_txTrace), "ns3::Packet::TracedCallback");
  return tid;
}

void TlOnOffUdpSource::Configure(const Address& to, uint32_t ip_bytes, Time interval, Ptr<RandomVariableStream> on,
                                 Ptr<RandomVariableStream> off) {
  NS_ABORT_MSG_IF(ip_bytes < kTlUdpIpHeaders + 12, "TlOnOffUdpSource: packets of at least 40 IP bytes");
  NS_ABORT_MSG_IF(!interval.IsStrictlyPositive(), "TlOnOffUdpSource: the interval must be positive");
  m_to = to;
  m_ipBytes = ip_bytes;
  m_interval = interval;
  m_on = on;
  m_off = off;
}

int64_t TlOnOffUdpSource::AssignStreams(int64_t stream) {
  int64_t used = 0;
  if (m_on) m_on->SetStream(stream + used++);
  if (m_off) m_off->SetStream(stream + used++);
  return used;
}

void TlOnOffUdpSource::StartApplication() {
  m_socket = Socket::CreateSocket(GetNode(), UdpSocketFactory::GetTypeId());
  NS_ABORT_MSG_IF(m_socket->Bind() != 0 || m_socket->Connect(m_to) != 0, "TlOnOffUdpSource: cannot open its socket");
  m_untilNext = Time(0);
  if (m_on && m_off) m_toggleEvent = Simulator::Schedule(Seconds(m_off->GetValue()), &TlOnOffUdpSource::BeginOn, this);
  else BeginOn();
}

void TlOnOffUdpSource::StopApplication() {
  m_sendEvent.Cancel();
  m_toggleEvent.Cancel();
  if (m_socket) m_socket->Close();
  m_socket = nullptr;
}

void TlOnOffUdpSource::BeginOn() {
  const Time now = Simulator::Now();
  m_onEnd = m_on ? now + Seconds(m_on->GetValue()) : Time::Max();
  if (m_on) m_toggleEvent = Simulator::Schedule(m_onEnd - now, &TlOnOffUdpSource::EndOn, this);
  m_nextSend = now + m_untilNext;
  if (m_nextSend < m_onEnd) m_sendEvent = Simulator::Schedule(m_untilNext, &TlOnOffUdpSource::Send, this);
}

void TlOnOffUdpSource::EndOn() {
  // The ON time still owed to the next packet carries over the OFF period.
  m_sendEvent.Cancel();
  m_untilNext = m_nextSend - Simulator::Now();
  const Time off = m_off ? Seconds(m_off->GetValue()) : Time(0);
  m_toggleEvent = Simulator::Schedule(off, &TlOnOffUdpSource::BeginOn, this);
}

void TlOnOffUdpSource::Send() {
  SeqTsHeader stamp;  // the send time is Now()
  stamp.SetSeq(m_seq++);
  Ptr<Packet> p = Create<Packet>(m_ipBytes - kTlUdpIpHeaders - stamp.GetSerializedSize());
  p->AddHeader(stamp);
  m_txTrace(p);
  m_socket->Send(p);
  m_nextSend += m_interval;
  if (m_nextSend < m_onEnd) m_sendEvent = Simulator::Schedule(m_interval, &TlOnOffUdpSource::Send, this);
}

Ptr<TlOnOffUdpSource> TlInstallVoip(Ptr<Node> node, const Address& to, const TlVoipParams& p, int64_t stream) {
  // Pareto with mean m and shape a has scale (minimum) m (a - 1) / a.
  auto pareto = [&p](double mean) {
    Ptr<ParetoRandomVariable> v = CreateObject<ParetoRandomVariable>();
    v->SetAttribute("Shape", DoubleValue(p.shape));
    v->SetAttribute("Scale", DoubleValue(mean * (p.shape - 1) / p.shape));
    return v;
  };
  Ptr<TlOnOffUdpSource> app = CreateObject<TlOnOffUdpSource>();
  app->Configure(to, p.ip_bytes, p.Interval(), pareto(p.on_mean_s), pareto(p.off_mean_s));
  app->AssignStreams(stream);
  node->AddApplication(app);
  return app;
}

Ptr<TlOnOffUdpSource> TlInstallSensor(Ptr<Node> node, const Address& to, const TlSensorParams& p, Time start,
                                      Time stop) {
  Ptr<TlOnOffUdpSource> app = CreateObject<TlOnOffUdpSource>();
  app->Configure(to, p.ip_bytes, p.interval, nullptr, nullptr);
  node->AddApplication(app);
  app->SetStartTime(start);
  app->SetStopTime(stop);
  return app;
}

Ptr<BulkSendApplication> TlInstallFtp(Ptr<Node> node, const Address& to, uint32_t segment) {
  BulkSendHelper send("ns3::TcpSocketFactory", to);
  send.SetAttribute("MaxBytes", UintegerValue(0));  // unlimited: an FTP download
  send.SetAttribute("SendSize", UintegerValue(segment));
  return DynamicCast<BulkSendApplication>(send.Install(node).Get(0));
}

std::pair<double, double> TlSensorWindow(uint32_t i, uint32_t n, double duration) {
  const double start = duration / 8 + duration / 4 * double(i) / double(std::max(n, 1u));
  return {start, start + duration / 2};
}

void TlAddPacketErrors(Ptr<NetDevice> dev, double rate, int64_t stream) {
  Ptr<RateErrorModel> em = CreateObject<RateErrorModel>();
  em->SetUnit(RateErrorModel::ERROR_UNIT_PACKET);
  em->SetRate(rate);
  em->AssignStreams(stream);
  Ptr<PointToPointNetDevice> p2p = DynamicCast<PointToPointNetDevice>(dev);
  NS_ABORT_MSG_IF(!p2p, "TlAddPacketErrors: a point-to-point device");
  p2p->SetReceiveErrorModel(em);
}

}  // namespace ns3
