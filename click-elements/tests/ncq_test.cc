// NCQ and NCQ+ (docs/reference/algorithms.md §4). Each expected class below is worked by
// hand from the corrected pseudo-code; rates are R-normalised counts.
#include "ncq.hh"

#include "fifo_test_harness.hh"

namespace tracelab {
namespace {
using testing::Driver;
using testing::pkt;

NcqConfig ncq(NcqVariant v, double t1) {
  NcqConfig c;
  c.variant = v;
  c.ncqthresh1 = t1;
  return c;
}

TEST(Ncq, DefaultsAreTheSeedValues) {
  NcqConfig c;
  EXPECT_EQ(c.queue.buffer.capacity, 100u);
  EXPECT_FALSE(c.queue.push_out);
  EXPECT_DOUBLE_EQ(c.ncqthresh1, 0.05);
  EXPECT_DOUBLE_EQ(c.alpha, 0.1);
  EXPECT_EQ(c.size_thresh, 150u);
}

TEST(Ncq, FavorsShortPacketsWithinTheFavorRate) {
  // ncqthresh = 0.5, size < 150:
  // 1 small: R=1, 0/1 < .5 HIGH (F=1)   2 small: R=2, 1/2 not < .5 NORMAL
  // 3 small: R=3, 1/3 HIGH (F=2)        4 1500 B: NORMAL
  // 5 small: R=5, 2/5 HIGH (F=3)        6 pure ACK 40 B: never favored
  // 7 small: R=7, 3/7 HIGH (F=4)        8 150 B: not < 150, NORMAL
  NcqCore q(ncq(NcqVariant::kNcq, 0.5));
  Driver d(q);
  uint32_t len[] = {100, 100, 100, 1500, 100, 40, 100, 150};
  for (uint64_t h = 0; h < 8; ++h) d.offer(pkt(h + 1, h, len[h], h == 5 ? (kFlagTcp | kFlagPureAck) : 0));
  EXPECT_EQ(q.favored_tiny(), 4u);
  EXPECT_EQ(d.drain(), (std::vector<uint64_t>{1, 3, 5, 7, 2, 4, 6, 8}));
}

TEST(Ncq, NcqPlusCorrectedPseudoCode) {
  // t1 = 0.5, k = 1.1, tiny <= 64 B, small <= 150 B, tiny_rate = Ft/R:
  //  1 tiny  R=1 total 0 < .5: HIGH (Ft=1)
  //  2 small R=2 total 1/2 not < .5: NORMAL, t2 = .5 − 1.1·1/2 -> clamp 0
  //  3 small R=3 Fs/R 0 not < t2 = 0: NORMAL, t2 = .5 − 1.1·1/3 = .1333
  //  4 tiny  R=4 total 1/4: HIGH (Ft=2)
  //  5 small R=5 Fs/R 0 < .1333, total 2/5 < .5: HIGH (Fs=1)
  //  6 small R=6 Fs/R 1/6 = .1667 not < .1333: NORMAL, t2 = .5 − 1.1·2/6 = .1333
  //  7 1040 B: NORMAL
  //  8 64 B (tiny, <=) R=8 total 3/8: HIGH (Ft=3)
  //  9 150 B (small, <=) R=9 Fs/R 1/9 < .1333, total 4/9: HIGH (Fs=2)
  // 10 151 B: NORMAL
  NcqCore q(ncq(NcqVariant::kNcqPlus, 0.5));
  Driver d(q);
  uint32_t len[] = {40, 140, 140, 40, 140, 140, 1040, 64, 150, 151};
  double t2_after[] = {0.5,
                       0.0,
                       0.5 - 1.1 / 3,
                       0.5 - 1.1 / 3,
                       0.5 - 1.1 / 3,
                       0.5 - 1.1 * 2 / 6,
                       0.5 - 1.1 * 2 / 6,
                       0.5 - 1.1 * 2 / 6,
                       0.5 - 1.1 * 2 / 6,
                       0.5 - 1.1 * 2 / 6};
  for (uint64_t h = 0; h < 10; ++h) {
    d.offer(pkt(h + 1, h, len[h]));
    EXPECT_NEAR(q.ncqthresh2(), t2_after[h], 1e-12) << "after packet " << h + 1;
  }
  EXPECT_EQ(q.favored_tiny(), 3u);
  EXPECT_EQ(q.favored_small(), 2u);
  EXPECT_EQ(d.drain(), (std::vector<uint64_t>{1, 4, 5, 8, 9, 2, 3, 6, 7, 10}));
}

TEST(Ncq, IncomingTinyShareOption) {
  // AMB-11(b): tiny, tiny (refused), small (refused at t2 = 0).
  // At the small packet R=3: favored tiny share 1/3 -> t2 = .5 − 1.1/3 = .1333;
  // incoming tiny share 2/3 -> t2 = .5 − 1.1·2/3 < 0 -> 0.
  for (TinyRate rate : {TinyRate::kFavored, TinyRate::kIncoming}) {
    NcqConfig c = ncq(NcqVariant::kNcqPlus, 0.5);
    c.tiny_rate = rate;
    NcqCore q(c);
    Driver d(q);
    d.offer(pkt(1, 1, 40));
    d.offer(pkt(2, 2, 40));
    d.offer(pkt(3, 3, 140));
    EXPECT_NEAR(q.ncqthresh2(), rate == TinyRate::kFavored ? 0.5 - 1.1 / 3 : 0.0, 1e-12);
  }
}

TEST(Ncq, FullBufferDropTailOrPushOut) {
  // AMB-12. Buffer 2 filled by two 1500-B NORMAL packets; a tiny HIGH packet
  // arrives. Drop-tail (default): the tiny packet is dropped. Push-out
  // variant: the last NORMAL packet (2) is pushed out instead.
  for (bool push_out : {false, true}) {
    NcqConfig c = ncq(NcqVariant::kNcqPlus, 0.5);
    c.queue.buffer.capacity = 2;
    c.queue.push_out = push_out;
    NcqCore q(c);
    Driver d(q);
    d.offer(pkt(1, 1, 1500));
    d.offer(pkt(2, 1, 1500));
    d.offer(pkt(3, 2, 40));
    if (push_out) {
      EXPECT_EQ(d.log.handles(DropReason::kPushedOut), (std::vector<uint64_t>{2}));
      EXPECT_EQ(d.drain(), (std::vector<uint64_t>{3, 1}));
    } else {
      EXPECT_EQ(d.log.handles(DropReason::kBufferFull), (std::vector<uint64_t>{3}));
    }
  }
}

TEST(Ncq, TinyShareBelowThresholdIsAlwaysFavored) {
  // The guarantee of [001 §3]: with tiny packets 4 % of arrivals (< t1 = 5 %)
  // and no small packets, every tiny packet is favored.
  NcqCore q(ncq(NcqVariant::kNcqPlus, 0.05));
  Driver d(q);
  uint64_t tiny = 0;
  for (uint64_t h = 0; h < 10000; ++h) {
    bool is_tiny = h % 25 == 0;
    tiny += is_tiny;
    d.offer(pkt(h, h % 7, is_tiny ? 40 : 1040));
    d.serve();
  }
  EXPECT_EQ(q.favored_tiny(), tiny);
}

TEST(Ncq, RandomizedConservation) {
  for (NcqVariant v : {NcqVariant::kNcq, NcqVariant::kNcqPlus}) {
    for (bool push_out : {false, true}) {
      NcqConfig c = ncq(v, 0.3);
      c.queue.buffer.capacity = 64;
      c.queue.push_out = push_out;
      c.favor_pure_acks = true;
      NcqCore q(c);
      testing::stress(q, 41 + push_out, 20000, 300,
                      [&] { ASSERT_EQ(q.admitted_high(), q.served_high() + q.high_packets()); });
      EXPECT_GT(q.admitted_high(), 0u);
    }
  }
}

}  // namespace
}  // namespace tracelab
