// The shared aggregate format (JumboGram / chunk shim) and the de-chunker.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "chunk_format.hh"
#include "dechunk.hh"
#include "rng.hh"

namespace tracelab {
namespace {

struct Built {
  std::vector<std::vector<uint8_t>> pkts;
  std::vector<uint8_t> wire;
};

Built build(const std::vector<size_t>& lens, const std::vector<Time>& arrivals, Time release, Time unit,
            uint64_t seed) {
  Built b;
  Rng rng(seed);
  std::vector<jg::PacketRef> refs;
  for (size_t i = 0; i < lens.size(); ++i) {
    std::vector<uint8_t> p(lens[i]);
    for (auto& x : p) x = static_cast<uint8_t>(rng.next_u64());
    b.pkts.push_back(std::move(p));
  }
  for (size_t i = 0; i < lens.size(); ++i) refs.push_back({b.pkts[i].data(), b.pkts[i].size(), arrivals[i]});
  b.wire.resize(jg::header_size(lens.size()) + 100000);
  jg::FormatError e;
  size_t n = jg::encode(refs.data(), refs.size(), release, unit, b.wire.data(), b.wire.size(), e);
  EXPECT_EQ(e, jg::FormatError::kOk);
  b.wire.resize(n);
  return b;
}

// RFC 1071 §3's worked example: the words 0001 f203 f4f5 f6f7 sum to 2ddf0,
// folded ddf2, complemented 220d; an odd last byte counts as its high half.
// This is the C++ copy of the checksum (the engine and the Click elements use
// it); the Rust and Python copies test the same example.
TEST(ChunkFormat, InternetChecksumOfTheRfc1071Example) {
  const uint8_t data[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7, 0x22, 0x0d};
  EXPECT_EQ(jg::internet_checksum(data, 8), 0x220d);
  EXPECT_EQ(jg::internet_checksum(data, 10), 0);  // with its checksum appended
  EXPECT_EQ(jg::internet_checksum(data, 3), static_cast<uint16_t>(~(0x0001 + 0xf200)));
}

TEST(ChunkFormat, HeaderLayoutByHand) {
  Built b = build({3, 2}, {1000 * kNanosecond, 4000 * kNanosecond}, 6500 * kNanosecond, kMicrosecond, 1);
  ASSERT_EQ(b.wire.size(), 6u + 8 + 5);
  // QTime = 5.5 us -> 5 units; N = 2; table {3, 0}, {2, 3}.
  const uint8_t expect_hdr[] = {0, 5, 0, 2, 0, 0, 0, 3, 0, 0, 0, 2, 0, 3};
  // Checksum by hand: words 0x0005 + 0x0002 + 0x0003 + 0x0000 + 0x0002 + 0x0003 = 0x000F.
  for (size_t i = 0; i < sizeof(expect_hdr); ++i) {
    if (i == 4 || i == 5) continue;
    EXPECT_EQ(b.wire[i], expect_hdr[i]) << "byte " << i;
  }
  EXPECT_EQ(jg::rd16(&b.wire[4]), 0xFFFF - 0x000F);
  EXPECT_EQ(0, std::memcmp(&b.wire[14], b.pkts[0].data(), 3));
  EXPECT_EQ(0, std::memcmp(&b.wire[17], b.pkts[1].data(), 2));
}

TEST(ChunkFormat, RoundTripByteForByteThroughDechunker) {
  std::vector<size_t> lens = {40, 1500, 64, 576, 1, 1200};
  std::vector<Time> arr = {0, 30 * kNanosecond, 95 * kNanosecond, 2 * kMicrosecond, 2 * kMicrosecond, 9 * kMicrosecond};
  Built b = build(lens, arr, 10 * kMicrosecond, 10 * kNanosecond, 2);
  Dechunker d(/*shaping=*/true, 10 * kNanosecond);
  SplitPacket out[8];
  const Time t0 = 5 * kMillisecond;
  SplitResult r = d.split(b.wire.data(), b.wire.size(), t0, out, 8);
  ASSERT_EQ(r.error, jg::FormatError::kOk);
  ASSERT_EQ(r.count, lens.size());
  EXPECT_EQ(r.missing, 0);
  for (size_t i = 0; i < lens.size(); ++i) {
    ASSERT_EQ(out[i].length, lens[i]);
    EXPECT_EQ(0, std::memcmp(b.wire.data() + out[i].offset, b.pkts[i].data(), lens[i])) << i;
    // Same spacing as at the ingress, truncated to the 10 ns unit.
    EXPECT_EQ(out[i].release, t0 + (arr[i] / (10 * kNanosecond)) * 10 * kNanosecond) << i;
  }
  Dechunker flat(false, 10 * kNanosecond);
  r = flat.split(b.wire.data(), b.wire.size(), t0, out, 8);
  for (size_t i = 0; i < r.count; ++i) EXPECT_EQ(out[i].release, t0);
}

TEST(ChunkFormat, MalformedInputIsRejectedNotRead) {
  Built b = build({100, 200}, {0, 0}, 0, kMicrosecond, 3);
  jg::View v;
  for (size_t len = 0; len < b.wire.size(); ++len) {
    jg::FormatError e = jg::parse(b.wire.data(), len, v);
    EXPECT_NE(e, jg::FormatError::kOk) << len;
  }
  EXPECT_EQ(jg::parse(b.wire.data(), 5, v), jg::FormatError::kTruncated);
  EXPECT_EQ(jg::parse(b.wire.data(), 13, v), jg::FormatError::kTruncated);
  EXPECT_EQ(jg::parse(b.wire.data(), b.wire.size() - 1, v), jg::FormatError::kLengthMismatch);
  std::vector<uint8_t> bad = b.wire;
  bad[7] ^= 1;  // a pktLen bit: caught by the checksum
  EXPECT_EQ(jg::parse(bad.data(), bad.size(), v), jg::FormatError::kBadChecksum);
  // Extra trailing byte.
  std::vector<uint8_t> longer = b.wire;
  longer.push_back(0);
  EXPECT_EQ(jg::parse(longer.data(), longer.size(), v), jg::FormatError::kLengthMismatch);
  // Encoder refusals.
  uint8_t out[64];
  jg::FormatError e;
  jg::PacketRef empty{out, 0, 0};
  EXPECT_EQ(jg::encode(&empty, 1, 0, 1, out, sizeof out, e), 0u);
  EXPECT_EQ(e, jg::FormatError::kEmptyPacket);
  jg::PacketRef big{out, 60, 0};
  EXPECT_EQ(jg::encode(&big, 1, 0, 1, out, sizeof out, e), 0u);
  EXPECT_EQ(e, jg::FormatError::kNoRoom);
  Dechunker d(true, 1);
  SplitPacket sp[1];
  EXPECT_EQ(d.split(b.wire.data(), b.wire.size(), 0, sp, 1).error, jg::FormatError::kNoRoom);
}

TEST(ChunkFormat, QTimeSaturatesAt65535Units) {
  EXPECT_EQ(jg::to_units(70 * kMillisecond, kMicrosecond), 0xFFFF);
  EXPECT_EQ(jg::to_units(-5, kMicrosecond), 0);
  EXPECT_EQ(jg::to_units(1999 * kNanosecond, kMicrosecond), 1);
}

// [002 §2.1]: two packets in one JumboGram over Ethernet cost -4 bytes.
TEST(JumboGram, NetCostOfTwoPacketsIsMinus4Bytes) {
  EXPECT_EQ(jg::net_cost_bytes(2), -4);
  EXPECT_EQ(jg::net_cost_bytes(1), 30);  // one packet: pure overhead 20 + 6 + 4
  EXPECT_EQ(jg::net_cost_bytes(12), 20 + 6 + 48 - 38 * 11);
}

// [002 §2.3]: N = 12; A asks 4 -> 4 dropped; B asks 3 -> none more;
// C asks 5 -> one more; 5 dropped, 7 delivered.
TEST(JumboGram, PartialDropTwelvePacketExample) {
  std::vector<size_t> lens(12);
  std::vector<Time> arr(12);
  for (size_t i = 0; i < 12; ++i) {
    lens[i] = 100 + i;
    arr[i] = static_cast<Time>(i) * kMicrosecond;
  }
  Built b = build(lens, arr, 12 * kMicrosecond, kMicrosecond, 4);
  size_t len = b.wire.size(), nl;
  uint16_t removed;
  ASSERT_EQ(jg::partial_drop(b.wire.data(), len, 4, nl, removed), jg::FormatError::kOk);
  EXPECT_EQ(removed, 4);
  EXPECT_EQ(nl, len - (111 + 110 + 109 + 108));
  len = nl;
  ASSERT_EQ(jg::partial_drop(b.wire.data(), len, 3, nl, removed), jg::FormatError::kOk);
  EXPECT_EQ(removed, 0);
  EXPECT_EQ(nl, len);
  ASSERT_EQ(jg::partial_drop(b.wire.data(), len, 5, nl, removed), jg::FormatError::kOk);
  EXPECT_EQ(removed, 1);
  len = nl;
  jg::View v;
  ASSERT_EQ(jg::parse(b.wire.data(), len, v), jg::FormatError::kOk);  // checksum refreshed
  EXPECT_EQ(v.n, 12);                                                 // N is never rewritten
  EXPECT_EQ(v.dropped(), 5);
  Dechunker d(true, kMicrosecond);
  SplitPacket out[12];
  SplitResult r = d.split(b.wire.data(), len, 0, out, 12);
  ASSERT_EQ(r.count, 7u);
  EXPECT_EQ(r.missing, 5);
  for (size_t i = 0; i < 7; ++i) EXPECT_EQ(0, std::memcmp(b.wire.data() + out[i].offset, b.pkts[i].data(), lens[i]));
}

TEST(EgressShaper, ReleasesAtScheduleInArrivalOrder) {
  EgressShaper s(4);
  std::vector<Packet> store(1);
  Batch b{store.data(), 1};
  Packet p;
  p.length = 100;
  for (int i = 0; i < 5; ++i) {
    p.handle = i;
    s.enqueue_at(p, (10 - i) * kMicrosecond, 0);  // later ones scheduled earlier
  }
  EXPECT_EQ(s.counters().dropped[int(DropReason::kBufferFull)], 1u);
  EXPECT_EQ(s.next_ready(0), 10 * kMicrosecond);
  EXPECT_FALSE(s.dequeue(9 * kMicrosecond, b));
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(s.dequeue(10 * kMicrosecond, b));
    EXPECT_EQ(b.packets[0].handle, uint64_t(i));  // never overtakes
  }
  EXPECT_EQ(s.counters().offered, s.counters().served + s.counters().dropped_total());
}

}  // namespace
}  // namespace tracelab
