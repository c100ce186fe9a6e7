// Drop-tail FIFO (docs/reference/algorithms.md §1). Expected orders and drops below are
// worked by hand from the spec's rules.
#include <algorithm>

#include "fifo.hh"

#include "fifo_test_harness.hh"

namespace tracelab {
namespace {
using testing::Driver;
using testing::pkt;

BufferConfig packets(uint64_t n) {
  BufferConfig c;
  c.capacity = n;
  return c;
}
BufferConfig bytes(uint64_t n, FullTest t = FullTest::kWouldOverflow) {
  BufferConfig c;
  c.granularity = Granularity::kBytes;
  c.capacity = n;
  c.full_test = t;
  return c;
}

TEST(Fifo, EmptyQueueHasNothingToSend) {
  FifoCore q(packets(4));
  Driver d(q);
  EXPECT_EQ(d.serve(), -1);
  EXPECT_EQ(q.next_ready(123), kNever);
  d.check();
}

TEST(Fifo, PreservesOrderAcrossFlows) {
  FifoCore q(packets(10));
  Driver d(q);
  for (uint64_t h = 0; h < 6; ++h) d.offer(pkt(h, h % 3, 100 + 10 * h));
  EXPECT_EQ(q.next_ready(5), 5);
  EXPECT_EQ(d.drain(), (std::vector<uint64_t>{0, 1, 2, 3, 4, 5}));
  d.check();
}

TEST(Fifo, BurstDropsExactlyArrivalsMinusCapacity) {
  // B = 3, 10 back-to-back arrivals, server blocked: packets 3..9 dropped.
  FifoCore q(packets(3));
  Driver d(q);
  for (uint64_t h = 0; h < 10; ++h) d.offer(pkt(h, 1, 1500));
  EXPECT_EQ(q.counters().dropped[0], 7u);
  EXPECT_EQ(d.log.handles(DropReason::kBufferFull), (std::vector<uint64_t>{3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(q.counters().highwater_packets, 3u);
  EXPECT_EQ(d.drain(), (std::vector<uint64_t>{0, 1, 2}));
  d.check();
}

TEST(Fifo, PacketModeCountsAcksAsFullSlots) {
  // 4 slots: one 1500-B packet and three 40-B ACKs fill it; a 4th ACK is dropped.
  FifoCore q(packets(4));
  Driver d(q);
  d.offer(pkt(0, 1, 1500));
  for (uint64_t h = 1; h <= 4; ++h) d.offer(pkt(h, 2, 40));
  EXPECT_EQ(d.log.handles(DropReason::kBufferFull), (std::vector<uint64_t>{4}));
  d.check();
}

TEST(Fifo, ByteModeCountsAcksByTheirBytes) {
  // 3000 B: 1500 + 37 * 40 = 2980 fits; the 38th ACK would make 3020.
  FifoCore q(bytes(3000));
  Driver d(q);
  d.offer(pkt(0, 1, 1500));
  for (uint64_t h = 1; h <= 38; ++h) d.offer(pkt(h, 2, 40));
  EXPECT_EQ(d.log.handles(DropReason::kBufferFull), (std::vector<uint64_t>{38}));
  EXPECT_EQ(q.length_bytes(), 2980u);
  d.offer(pkt(39, 1, 20));  // exactly 3000: fits ("would overflow" test)
  EXPECT_EQ(q.length_bytes(), 3000u);
  d.check();
}

TEST(Fifo, ByteModeFullTestVariants) {
  // AMB-1: 2999 B, two 1500-B packets. "Would overflow": 3000 > 2999, drop
  // the second. "Already full": 1500 < 2999, accept; then 3000 >= 2999, drop.
  {
    FifoCore q(bytes(2999));
    Driver d(q);
    d.offer(pkt(0, 1, 1500));
    d.offer(pkt(1, 1, 1500));
    EXPECT_EQ(d.log.handles(DropReason::kBufferFull), (std::vector<uint64_t>{1}));
  }
  {
    FifoCore q(bytes(2999, FullTest::kAlreadyFull));
    Driver d(q);
    d.offer(pkt(0, 1, 1500));
    d.offer(pkt(1, 1, 1500));
    d.offer(pkt(2, 1, 40));
    EXPECT_EQ(d.log.handles(DropReason::kBufferFull), (std::vector<uint64_t>{2}));
    EXPECT_EQ(q.length_bytes(), 3000u);
  }
}

TEST(Fifo, InServicePacketKeepsItsSlotUntilTransmissionEnds) {
  // 2 slots at 10 Gb/s: a 1500-B packet takes 1.2 us on the wire.
  BufferConfig c = packets(2);
  c.in_service_link_bps = 10'000'000'000ULL;
  FifoCore q(c);
  Driver d(q);
  d.offer(pkt(0, 1, 1500), 0);
  d.offer(pkt(1, 1, 1500), 0);
  EXPECT_EQ(d.serve(0), 0);                      // 0 on the wire, still holds a slot
  d.offer(pkt(2, 1, 1500), 1199 * kNanosecond);  // 0 + 1 occupy both slots
  EXPECT_EQ(d.log.handles(DropReason::kBufferFull), (std::vector<uint64_t>{2}));
  d.offer(pkt(3, 1, 1500), 1200 * kNanosecond);  // 0 has left
  EXPECT_EQ(d.log.drops.size(), 1u);
  d.check();
  EXPECT_EQ(d.drain(2400 * kNanosecond), (std::vector<uint64_t>{1, 3}));
  d.check();
}

TEST(Fifo, RetireAtOrAfterEqualsTheDividedEnd) {
  // The engine's division-free query against the division: max(retire_at(),
  // t) for t around the rounded-up end, at rates that divide 8e12 and that
  // do not (the link then ends a transmission up to 1 ps earlier).
  for (uint64_t bps : {10'000'000'000ULL, 9'999'999'997ULL, 1'000'000'007ULL, 3ULL}) {
    for (uint32_t length : {40u, 64u, 1500u, 9000u}) {
      BufferConfig c = packets(4);
      c.in_service_link_bps = bps;
      FifoCore q(c);
      EXPECT_EQ(q.retire_at_or_after(0), kNever);
      const Time start = 123457;
      q.enqueue(pkt(0, 1, length), start);
      Packet storage[1];
      Batch out{storage, 1};
      ASSERT_TRUE(q.dequeue(start, out));
      const Time end = q.retire_at();
      ASSERT_EQ(end, start + serialization_time(length, bps));
      for (Time t : {start - 1, start, end - 2, end - 1, end, end + 1, end + 1000})
        EXPECT_EQ(q.retire_at_or_after(t), std::max(end, t)) << bps << " b/s, " << length << " B, t = " << t;
    }
  }
}

TEST(Fifo, HighwaterCountsThePacketOnTheWire) {
  // 0 is on the wire when 1 arrives: the buffer holds two packets (§2), one
  // of them waiting. length_packets() counts the waiting ones only.
  BufferConfig c = packets(2);
  c.in_service_link_bps = 10'000'000'000ULL;
  FifoCore q(c);
  Driver d(q);
  d.offer(pkt(0, 1, 1500), 0);
  EXPECT_EQ(d.serve(0), 0);
  d.offer(pkt(1, 1, 1000), 100 * kNanosecond);
  EXPECT_EQ(q.length_packets(), 1u);
  EXPECT_EQ(q.counters().highwater_packets, 2u);
  EXPECT_EQ(q.counters().highwater_bytes, 2500u);
  d.check();
}

TEST(Fifo, ByteModeSlotsBoundTinyPackets) {
  // 400 B with min_packet_bytes 40 gives 11 slots; 20-B packets run out of
  // slots before bytes (11 * 20 = 220 B) and are dropped as buffer_full.
  BufferConfig c = bytes(400);
  FifoCore q(c);
  Driver d(q);
  for (uint64_t h = 0; h < 12; ++h) d.offer(pkt(h, 1, 20));
  EXPECT_EQ(d.log.handles(DropReason::kBufferFull), (std::vector<uint64_t>{11}));
}

TEST(Fifo, RandomizedConservation) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    FifoCore q(packets(50));
    testing::stress(q, seed, 20000, 500);
    FifoCore qb(bytes(30000));
    testing::stress(qb, seed, 20000, 500);
  }
}

TEST(Fifo, RejectsZeroCapacity) { EXPECT_THROW(FifoCore(packets(0)), std::invalid_argument); }

TEST(Fifo, DepartureCarriesItsWireBytes) {
  // The batch's wire_bytes is what the link serializes: each departure's own
  // length, not a previous departure's nor the cleared 0.
  FifoCore q(packets(4));
  Packet storage[1];
  Batch out{storage, 1};
  q.enqueue(pkt(0, 1, 1500), 0);
  q.enqueue(pkt(1, 1, 40), 0);
  ASSERT_TRUE(q.dequeue(0, out));
  EXPECT_EQ(out.wire_bytes, 1500u);
  ASSERT_TRUE(q.dequeue(0, out));
  EXPECT_EQ(out.wire_bytes, 40u);
}

TEST(Fifo, ResetHighwaterRestartsAtTheCurrentOccupancy) {
  // §2: after reset_counters() the high-water is the buffer's occupancy at
  // that moment (3 packets, 300 B), not 0, even before the next arrival.
  FifoCore q(packets(10));
  Driver d(q);
  for (uint64_t h = 0; h < 5; ++h) d.offer(pkt(h, 1, 100));
  d.serve();
  d.serve();
  q.reset_counters();
  EXPECT_EQ(q.counters().highwater_packets, 3u);
  EXPECT_EQ(q.counters().highwater_bytes, 300u);
}

}  // namespace
}  // namespace tracelab
