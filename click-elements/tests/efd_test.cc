// EFD and its variants (docs/reference/algorithms.md §2.1–§2.3, thesis Algorithm 3).
// Every expected order and drop list is worked by hand in the comments.
#include "efd.hh"

#include "fifo_test_harness.hh"

namespace tracelab {
namespace {
using testing::Driver;
using testing::pkt;

EfdConfig efd(uint64_t buffer, uint64_t th) {
  EfdConfig c;
  c.queue.buffer.capacity = buffer;
  c.threshold = th;
  return c;
}

TEST(Efd, DefaultsAreTheThesisValues) {
  EXPECT_EQ(EfdConfig{}.threshold, 30000u);
  EXPECT_EQ(EfdConfig::pefd().threshold, 20u);
  EXPECT_EQ(EfdConfig{}.queue.buffer.capacity, 300u);
  EXPECT_TRUE(EfdConfig{}.queue.push_out);
}

TEST(Efd, FirstTwentyFullSizePacketsOfAFragmentAreHigh) {
  // th = 30 000 B, 1500-B packets: counters 0, 1500, ..., 28 500 are < th
  // (20 packets, HIGH); A20 sees 30 000 (LOW); A21 LOW. B22 is a new flow:
  // HIGH, served before A's LOW packets.
  EfdCore q(efd(100, 30000));
  Driver d(q);
  for (uint64_t h = 0; h < 22; ++h) d.offer(pkt(h, 1, 1500));
  d.offer(pkt(22, 2, 1500));
  EXPECT_EQ(q.admitted_high(), 21u);
  EXPECT_EQ(q.admitted_low(), 2u);
  std::vector<uint64_t> expect;
  for (uint64_t h = 0; h < 20; ++h) expect.push_back(h);
  expect.insert(expect.end(), {22, 20, 21});
  EXPECT_EQ(d.drain(), expect);
  EXPECT_EQ(q.flows(), 0u);
  d.check();
}

TEST(Efd, ThresholdComparisonIsStrict) {
  // AMB-2: counter == th is LOW. th = 3000: counters 0, 1500 HIGH; 3000 LOW.
  EfdCore q(efd(10, 3000));
  Driver d(q);
  for (uint64_t h = 0; h < 3; ++h) d.offer(pkt(h, 1, 1500));
  EXPECT_EQ(q.admitted_low(), 1u);
  EfdCore q2(efd(10, 3001));  // 3000 < 3001: all three HIGH
  Driver d2(q2);
  for (uint64_t h = 0; h < 3; ++h) d2.offer(pkt(h, 1, 1500));
  EXPECT_EQ(q2.admitted_low(), 0u);
}

TEST(Efd, PushOutOrderFollowsAlgorithm3) {
  // B = 4, th = 1500. A0 HIGH (counter 0); A1, A2, A3 LOW. Full: H[A0] L[A1 A2 A3].
  // B4 HIGH, L non-empty: push out L's tail A3 -> H[A0 B4] L[A1 A2].
  // A5 LOW at a full buffer: dropped.  C6 HIGH: push out A2.  D7: push out A1.
  // E8 HIGH with L empty: dropped. Service: A0 B4 C6 D7.
  EfdCore q(efd(4, 1500));
  Driver d(q);
  uint64_t flow[] = {1, 1, 1, 1, 2, 1, 3, 4, 5};
  for (uint64_t h = 0; h < 9; ++h) {
    d.offer(pkt(h, flow[h], 1500));
    EXPECT_LE(q.flows(), q.length_packets());
  }
  EXPECT_EQ(d.log.handles(DropReason::kPushedOut), (std::vector<uint64_t>{3, 2, 1}));
  EXPECT_EQ(d.log.handles(DropReason::kBufferFull), (std::vector<uint64_t>{5, 8}));
  EXPECT_EQ(q.pushed_out(), 3u);
  EXPECT_EQ(q.flows(), 4u);  // A (A0 only), B, C, D
  EXPECT_EQ(d.drain(), (std::vector<uint64_t>{0, 4, 6, 7}));
  EXPECT_EQ(q.flows(), 0u);
  d.check();
}

TEST(Efd, DropTailOptionNeverPushesOut) {
  EfdConfig c = efd(2, 1500);
  c.queue.push_out = false;
  EfdCore q(c);
  Driver d(q);
  d.offer(pkt(0, 1, 1500));  // HIGH
  d.offer(pkt(1, 1, 1500));  // LOW
  d.offer(pkt(2, 2, 1500));  // HIGH, but drop-tail: dropped
  EXPECT_EQ(d.log.handles(DropReason::kBufferFull), (std::vector<uint64_t>{2}));
}

TEST(Efd, FlowEntryEndsWithItsLastPacketSoTheNextFragmentIsFresh) {
  // th = 3000: A0, A1 HIGH, A2 LOW. All served: entry deleted. A3 is HIGH again.
  EfdCore q(efd(10, 3000));
  Driver d(q);
  for (uint64_t h = 0; h < 3; ++h) d.offer(pkt(h, 1, 1500));
  EXPECT_EQ(q.flows(), 1u);
  d.drain();
  EXPECT_EQ(q.flows(), 0u);
  d.offer(pkt(3, 1, 1500));
  EXPECT_EQ(q.admitted_high(), 3u);
  // While one packet remains the entry (and its counter) persists:
  d.offer(pkt(4, 1, 1500));  // counter 1500: HIGH
  d.serve();                 // A3 leaves, A4 keeps the entry
  d.offer(pkt(5, 1, 1500));  // counter 3000: LOW
  EXPECT_EQ(q.admitted_low(), 2u);
  EXPECT_EQ(q.flows_highwater(), 1u);
}

TEST(Efd, ServedCounterOption) {
  // counter = bytes dequeued during the entry: A0..A2 all HIGH (nothing
  // served yet); serve A0, A1 -> counter 3000; A3 is LOW.
  EfdConfig c = efd(10, 3000);
  c.counter = EfdCounter::kServed;
  EfdCore q(c);
  Driver d(q);
  for (uint64_t h = 0; h < 3; ++h) d.offer(pkt(h, 1, 1500));
  EXPECT_EQ(q.admitted_low(), 0u);
  d.serve();
  d.serve();
  d.offer(pkt(3, 1, 1500));
  EXPECT_EQ(q.admitted_low(), 1u);
}

TEST(Efd, PefdCountsPacketsWhateverTheirSize) {
  // 21 ACK-sized packets: BEFD counter 800 B (all HIGH); PEFD: the 21st
  // sees counter 20 = th (LOW).
  EfdConfig pc = EfdConfig::pefd();
  EfdCore p(pc), b(efd(300, 30000));
  Driver dp(p), db(b);
  for (uint64_t h = 0; h < 21; ++h) {
    dp.offer(pkt(h, 1, 40));
    db.offer(pkt(h, 1, 40));
  }
  EXPECT_EQ(p.admitted_low(), 1u);
  EXPECT_EQ(b.admitted_low(), 0u);
}

Packet upstream_ack(uint64_t h, uint32_t ack) {
  Packet p = pkt(h, 100, 40, kFlagTcp | kFlagPureAck);  // flow_hash 100: upstream direction
  p.conn_hash = 7;
  p.tcp_ack = ack;
  return p;
}

TEST(Efd, EfdAckCountsAckProgressAcrossSequenceWrap) {
  // EFDACK, th = 30 000: ACK(2^32 - 1000) sets the reference (adds 0); its
  // duplicate adds 0; ACK(29000) is still HIGH (counter 0) and advances
  // 30 000 across the wrap; ACK(30000) sees counter 30 000 = th: LOW. A
  // reverse-direction data packet of the same connection (other flow_hash,
  // same conn_hash) shares the entry: LOW too.
  EfdCore q(EfdConfig::efdack());
  Driver d(q);
  d.offer(upstream_ack(0, 0xFFFFFC18u));
  d.offer(upstream_ack(1, 0xFFFFFC18u));
  d.offer(upstream_ack(2, 29000));
  EXPECT_EQ(q.admitted_low(), 0u);
  d.offer(upstream_ack(3, 30000));
  EXPECT_EQ(q.admitted_low(), 1u);
  Packet data = pkt(4, 200, 1500, kFlagTcp);
  data.conn_hash = 7;
  d.offer(data);
  EXPECT_EQ(q.admitted_low(), 2u);
  EXPECT_EQ(q.flows(), 1u);
  // The same ACKs under BEFD: 40 B each, all HIGH.
  EfdCore b(EfdConfig::befd());
  Driver db(b);
  for (uint32_t h = 0; h < 4; ++h) db.offer(upstream_ack(h, 1000 + 30000 * h));
  EXPECT_EQ(b.admitted_low(), 0u);
}

TEST(Efd, EfdAckIgnoresOldAndDuplicateAcks) {
  // th = 30 001: reference 1000; ACK(31000) adds 30 000; a duplicate and an
  // older ACK add nothing, so ACK(31001) is still HIGH (counter 30 000) and
  // only the one after it is LOW.
  EfdConfig c = EfdConfig::efdack();
  c.threshold = 30001;
  EfdCore q(c);
  Driver d(q);
  uint32_t acks[] = {1000, 31000, 31000, 20000, 31001, 31002};
  for (uint32_t h = 0; h < 6; ++h) d.offer(upstream_ack(h, acks[h]));
  EXPECT_EQ(q.admitted_low(), 1u);
}

TEST(Efd, LasLowQueueOrdersByCounterAndPushesOutTheLargestTag) {
  // th = 1500. A0 HIGH (tag 0); A1, A2, A3 LOW with tags 1500, 3000, 4500;
  // B0 HIGH (tag 0); B1 LOW tag 1500. FIFO L: A1 A2 A3 B1. LAS L: A1 B1 A2 A3
  // (A1 and B1 tie at 1500; A1 arrived first).
  for (Discipline low : {Discipline::kFifo, Discipline::kLas}) {
    EfdConfig c = efd(10, 1500);
    c.queue.low = low;
    EfdCore q(c);
    Driver d(q);
    uint64_t flow[] = {1, 1, 1, 1, 2, 2};
    for (uint64_t h = 0; h < 6; ++h) d.offer(pkt(h, flow[h], 1500));
    std::vector<uint64_t> fifo = {0, 4, 1, 2, 3, 5}, las = {0, 4, 1, 5, 2, 3};
    EXPECT_EQ(d.drain(), low == Discipline::kLas ? las : fifo);
  }
  // B = 5: A0..A3, B0 fill it: H[A0 B0] L[A1 A2 A3]. B1 arrives LOW with tag
  // 1500. FIFO L: B1 is the physical tail, dropped. LAS L: 1500 < 4500, so B1
  // takes its place and A3 (largest tag) is pushed out.
  for (Discipline low : {Discipline::kFifo, Discipline::kLas}) {
    EfdConfig c = efd(5, 1500);
    c.queue.low = low;
    EfdCore q(c);
    Driver d(q);
    uint64_t flow[] = {1, 1, 1, 1, 2, 2};
    for (uint64_t h = 0; h < 6; ++h) d.offer(pkt(h, flow[h], 1500));
    if (low == Discipline::kLas) {
      EXPECT_EQ(d.log.handles(DropReason::kPushedOut), (std::vector<uint64_t>{3}));
      EXPECT_EQ(d.drain(), (std::vector<uint64_t>{0, 4, 1, 5, 2}));
    } else {
      EXPECT_EQ(d.log.handles(DropReason::kBufferFull), (std::vector<uint64_t>{5}));
      EXPECT_EQ(d.drain(), (std::vector<uint64_t>{0, 4, 1, 2, 3}));
    }
    d.check();
  }
}

TEST(Efd, LasLowQueueTieGoesToTheOlderPacket) {
  // B = 3, th = 1500, LAS-ordered L: A0 HIGH (0), A1 LOW (tag 1500), B2 HIGH
  // (0): full. B3 arrives LOW with tag 1500, equal to A1's: in arrival order
  // B3 is the last packet, so B3 itself is dropped and A1 stays.
  EfdConfig c = efd(3, 1500);
  c.queue.low = Discipline::kLas;
  EfdCore q(c);
  Driver d(q);
  uint64_t flow[] = {1, 1, 2, 2};
  for (uint64_t h = 0; h < 4; ++h) d.offer(pkt(h, flow[h], 1500));
  EXPECT_EQ(d.log.handles(DropReason::kBufferFull), (std::vector<uint64_t>{3}));
  EXPECT_EQ(q.pushed_out(), 0u);
}

TEST(Efd, LasHighQueueServesSmallestCounterFirst) {
  // th large: everything HIGH. A0 A1 A2 (tags 0, 1500, 3000), B3 (tag 0):
  // LAS H serves A0, B3 (tie at 0, A0 first), A1, A2.
  EfdConfig c = efd(10, 1000000);
  c.queue.high = Discipline::kLas;
  EfdCore q(c);
  Driver d(q);
  uint64_t flow[] = {1, 1, 1, 2};
  for (uint64_t h = 0; h < 4; ++h) d.offer(pkt(h, flow[h], 1500));
  EXPECT_EQ(d.drain(), (std::vector<uint64_t>{0, 3, 1, 2}));
}

// Byte mode, 3000 B, th = 40: X0 (1500 B) and A0 (40 B) are HIGH, A1..A36
// LOW (36 * 40 = 1440 B): 2980 B in all. A37 would make 3020: LOW, dropped.
// Then Y0 (new flow, HIGH) arrives with 1000 or 1500 B.
TEST(Efd, ByteModePushOutRemovesTailPacketsUntilTheArrivalFits) {
  for (uint32_t y_len : {1000u, 1500u}) {
    for (bool precheck : {false, true}) {
      EfdConfig c = efd(3000, 40);
      c.queue.buffer.granularity = Granularity::kBytes;
      c.queue.byte_pushout_precheck = precheck;
      EfdCore q(c);
      Driver d(q);
      d.offer(pkt(0, 9, 1500));
      for (uint64_t h = 1; h <= 38; ++h) d.offer(pkt(h, 1, 40));  // A0..A37 = handles 1..38
      EXPECT_EQ(d.log.handles(DropReason::kBufferFull), (std::vector<uint64_t>{38}));
      EXPECT_EQ(q.length_bytes(), 2980u);
      d.offer(pkt(100, 2, y_len));  // Y0, HIGH
      std::vector<uint64_t> pushed = d.log.handles(DropReason::kPushedOut);
      if (y_len == 1000) {
        // Needs 2980 - 40k + 1000 <= 3000: k = 25, A36 down to A12 (handles 37..13).
        ASSERT_EQ(pushed.size(), 25u);
        EXPECT_EQ(pushed.front(), 37u);
        EXPECT_EQ(pushed.back(), 13u);
        EXPECT_EQ(q.length_bytes(), 2980u - 1000u + 1000u);
      } else if (!precheck) {
        // Emptying L leaves 1540 B + 1500 > 3000: all 36 pushed out, Y0 dropped.
        EXPECT_EQ(pushed.size(), 36u);
        EXPECT_EQ(d.log.handles(DropReason::kBufferFull), (std::vector<uint64_t>{38, 100}));
        EXPECT_EQ(q.length_bytes(), 1540u);
      } else {
        // Pre-check sees it cannot fit: only Y0 is dropped.
        EXPECT_TRUE(pushed.empty());
        EXPECT_EQ(q.length_bytes(), 2980u);
      }
      EXPECT_LE(q.flows(), q.length_packets());
      d.check();
    }
  }
}

TEST(Efd, InServicePacketKeepsItsFlowEntry) {
  // th = 3000, 10 Gb/s. A0, A1 HIGH. Serve A0 then A1 (A1 on the wire,
  // still counted): A2 arriving during A1's transmission finds the entry with
  // counter 3000 -> LOW. With the default (no in-service accounting) the
  // entry is gone and A2 is HIGH.
  for (uint64_t bps : {uint64_t{0}, uint64_t{10'000'000'000}}) {
    EfdConfig c = efd(10, 3000);
    c.queue.buffer.in_service_link_bps = bps;
    EfdCore q(c);
    Driver d(q);
    d.offer(pkt(0, 1, 1500), 0);
    d.offer(pkt(1, 1, 1500), 0);
    d.serve(0);
    d.serve(1200 * kNanosecond);
    d.offer(pkt(2, 1, 1500), 1300 * kNanosecond);
    EXPECT_EQ(q.admitted_low(), bps ? 1u : 0u);
    EXPECT_EQ(q.flows(), 1u);
    d.check();
  }
}

// The §2.1 invariants, after every operation of a seeded random run:
// |T| <= packets in the buffer; every entry has nq >= 1; sum nq = packets
// in the buffer; HIGH packets are never pushed out.
void check_invariants(const EfdCore& q) {
  const uint64_t in_buffer = q.meter().packets();
  ASSERT_LE(q.flows(), in_buffer);
  uint64_t sum_nq = 0;
  bool all_positive = true;
  q.table().for_each([&](uint64_t, const EfdCore::Entry& e) {
    sum_nq += e.nq;
    all_positive = all_positive && e.nq >= 1;
  });
  ASSERT_TRUE(all_positive);
  ASSERT_EQ(sum_nq, in_buffer);
  ASSERT_EQ(q.admitted_high(), q.served_high() + q.high_packets());
}

TEST(Efd, RandomizedInvariantsAndConservation) {
  std::vector<EfdConfig> configs;
  for (EfdConfig base : {EfdConfig::befd(), EfdConfig::pefd(), EfdConfig::efdack()}) {
    base.queue.buffer.capacity = 64;
    base.threshold = base.variant == EfdVariant::kPefd ? 5 : 6000;
    configs.push_back(base);
    EfdConfig c = base;
    c.counter = EfdCounter::kServed;
    configs.push_back(c);
    c = base;
    c.queue.high = Discipline::kLas;
    c.queue.low = Discipline::kLas;
    configs.push_back(c);
    c = base;
    c.queue.buffer.in_service_link_bps = 10'000'000'000ULL;
    configs.push_back(c);
    for (bool precheck : {false, true}) {
      c = base;
      c.queue.buffer.granularity = Granularity::kBytes;
      c.queue.buffer.capacity = 40000;
      c.queue.byte_pushout_precheck = precheck;
      c.queue.low = precheck ? Discipline::kLas : Discipline::kFifo;
      configs.push_back(c);
    }
  }
  uint64_t seed = 1;
  for (const EfdConfig& c : configs) {
    EfdCore q(c);
    testing::stress(q, seed++, 20000, 300, [&] { check_invariants(q); });
    EXPECT_GT(q.pushed_out(), 0u);
    EXPECT_GT(q.admitted_low(), 0u);
    EXPECT_EQ(q.flows(), 0u);
  }
}

TEST(Efd, AdmittedCounterIgnoresServedDepartures) {
  // AMB-2 (counter = admitted volume): a departure adds nothing. th = 3000,
  // 1000-B packets: A0, A1 admitted (counter 2000); A0 served (the entry
  // lives on with A1, counter still 2000); A2 sees 2000 < 3000: HIGH.
  EfdCore q(efd(10, 3000));
  Driver d(q);
  d.offer(pkt(0, 1, 1000));
  d.offer(pkt(1, 1, 1000));
  EXPECT_EQ(d.serve(), 0);
  d.offer(pkt(2, 1, 1000));
  EXPECT_EQ(q.admitted_low(), 0u);
  d.offer(pkt(3, 1, 1000));  // counter 3000: LOW
  EXPECT_EQ(q.admitted_low(), 1u);
  d.check();
}

TEST(Efd, FailedBytePushOutRollsBackTheAckReference) {
  // EFDACK, byte mode, B = 2060 B, th = 1000. Connection F (conn 1) sends
  // pure ACKs of 40 B, G (conn 2) data.
  //   F0 ack 1000: HIGH, the entry's reference (adds 0). F0b ack 1000: 0.
  //   G0 1000 B: HIGH (G 1000). G1 20 B: LOW (1000 is not < 1000).
  //   H2 960 B (conn 3): HIGH. Buffer 2060 B = full; L = [G1].
  //   F1 ack 1500 (40 B) at the full buffer: HIGH, accounted (+500), G1
  //   pushed out, still no room (2040 + 40 > 2060), L empty: F1 dropped and
  //   its accounting undone: counter 0, reference back to 1000.
  //   Serve F0 (F0b keeps F's entry). F2 ack 2200: adds 2200 - 1000 = 1200
  //   (from 1500 it would be 700). Serve F0b (F2 keeps the entry). F3 ack
  //   2200: counter 1200 is not < 1000: LOW (with 700 it would be HIGH).
  EfdConfig c = EfdConfig::efdack();
  c.queue.buffer.granularity = Granularity::kBytes;
  c.queue.buffer.capacity = 2060;
  c.threshold = 1000;
  EfdCore q(c);
  Driver d(q);
  auto ack = [](uint64_t h, uint32_t number) {
    Packet p = pkt(h, 1, 40, kFlagTcp | kFlagPureAck);
    p.tcp_ack = number;
    return p;
  };
  d.offer(ack(0, 1000));
  d.offer(ack(1, 1000));
  d.offer(pkt(2, 2, 1000, kFlagTcp));
  d.offer(pkt(3, 2, 20, kFlagTcp));
  d.offer(pkt(4, 3, 960, kFlagTcp));
  ASSERT_EQ(q.admitted_low(), 1u);
  d.offer(ack(5, 1500));
  EXPECT_EQ(d.log.handles(DropReason::kPushedOut), (std::vector<uint64_t>{3}));
  EXPECT_EQ(d.log.handles(DropReason::kBufferFull), (std::vector<uint64_t>{5}));
  EXPECT_EQ(d.serve(), 0);
  d.offer(ack(6, 2200));
  EXPECT_EQ(d.serve(), 1);
  d.offer(ack(7, 2200));
  EXPECT_EQ(q.admitted_low(), 2u);
  EXPECT_EQ(q.low_packets(), 1u);
  d.check();
}

}  // namespace
}  // namespace tracelab
