// tracelab queueing cores: ChuTQ, chunking with N class buffers in tandem
// with one chunking buffer, policies DCF / TPF / CEF, and CEA
// (docs/reference/algorithms.md §6.5, §6.6; [000 §4.3, §4.4]).
//
// * Class buffers: the class selection of ChuMQ (chumq.hh); they have no
//   timers and form no chunks.
// * Pull: while the chunking buffer can take the selected packet, the head
//   of line (HoL) packet with the largest attribute alpha moves into it:
//     DCF  alpha = 1/r        TPF  alpha = (1/r)(size/MTU)    CEF  alpha = (1/r)(1/size)
//   r = residual waiting time of the HoL packet now; no budget counts as
//   alpha = 0; ties go to the lower class index. An expired HoL packet
//   (r <= 0) is "unspecified" in the seed: the spec's default treats it as
//   most urgent (alpha = +inf, `expired_first`); the alternative
//   (`expired_first = false`) ranks it below every live packet (alpha =
//   -0.5, expired ones tie and go by class index), so that packets which can
//   still meet their budget are not sacrificed to ones that cannot. The
//   alternative is what reproduces [000] Table IV (replay experiment E-CHK-4).
// * ⚠AMB-21 (pull instant) resolved as the spec recommends: the chunking
//   buffer pulls whenever its content is below the MTU and the output is
//   not blocked. "Blocked" = the link is still sending the previous chunk:
//   the core knows the link rate (`link_bps`, must equal the real link) and
//   so knows when the chunk it handed out ends. While blocked, arrivals wait
//   in the class buffers, where the policy can still reorder them. link_bps
//   = 0 means never blocked (pull on every arrival).
// * The chunking buffer's timer is the earliest deadline of its content. A
//   chunk (its whole content) leaves when the link is free and either the
//   timer has expired or the selected HoL packet does not fit (MTU excess;
//   that packet becomes the head of the next chunk).
// * CEA (`cea`), ⚠AMB-22 default HoL only: when the selected packet does not
//   fit, other classes' HoL packets that still fit are added, shortest-delay
//   class (lowest index) first, until none fits.
//
// There is one chunk source, so no chunk transmission contention.
// Shared definitions (budget, shim, violation, capacity): chunk_common.hh.
#pragma once

#include <vector>

#include "chunk_common.hh"
#include "fifo_buffer.hh"

namespace tracelab {

enum class ChuTQPolicy : uint8_t { kDCF, kTPF, kCEF };

struct ChuTQConfig {
  std::vector<Time> timers = {50 * kMicrosecond, 100 * kMicrosecond, 200 * kMicrosecond};
  ChuTQPolicy policy = ChuTQPolicy::kDCF;
  uint32_t mtu = 9000;
  bool shim = true;  // count the 6+4N chunk header (false: seed's 0)
  bool cea = false;
  bool expired_first = true;              // r <= 0: most urgent (spec) or below every live packet
  uint64_t link_bps = 10'000'000'000ULL;  // output link; 0 = never blocked
  size_t capacity_packets = 16384;        // NOT IN SEEDS; all packets held
};

class ChuTQ final : public ChunkCore {
 public:
  explicit ChuTQ(const ChuTQConfig& c = {}) : cfg_(c), cb_(static_cast<uint32_t>(c.capacity_packets)) {
    if (cfg_.timers.empty()) cfg_.timers.push_back(50 * kMicrosecond);
    bufs_.reserve(cfg_.timers.size());
    for (size_t i = 0; i < cfg_.timers.size(); ++i) bufs_.emplace_back(static_cast<uint32_t>(c.capacity_packets));
  }

  size_t select_buffer(const Packet& p) const { return select_class_buffer(cfg_.timers, p); }

  void enqueue(const Packet& in, Time now) override {
    Packet p;
    if (!admit(cfg_, in, now, p)) return;
    bufs_[select_buffer(p)].push_back(p);
    ++held_packets_;
    held_bytes_ += p.length;
    ++counters_.enqueued;
    note_highwater(held_packets_, held_bytes_);
    if (now >= output_free_) pull(now);
  }

  bool dequeue(Time now, Batch& out) override {
    out.clear();
    if (now < output_free_) return false;
    pull(now);
    if (cb_.empty() || (!cb_full_ && cb_deadline_ > now) || out.capacity == 0) return false;
    uint64_t payload = 0;
    if (cb_full_) ++stats_.mtu_chunks;
    else ++stats_.timer_chunks;
    while (!cb_.empty() && out.count < out.capacity) {
      const Packet& p = cb_.front();
      out.packets[out.count++] = p;
      payload += p.length;
      stats_.note_served(p, now);
      cb_bytes_ -= p.length;
      cb_.drop_front();
    }
    if (!cb_.empty()) ++stats_.split_chunks;
    stats_.note_chunk(out, payload, cfg_.shim);
    counters_.served += out.count;
    held_packets_ -= out.count;
    held_bytes_ -= payload;
    if (cfg_.link_bps) output_free_ = now + serialization_time(out.wire_bytes, cfg_.link_bps);
    recompute_cb();
    pull(now);
    return true;
  }

  Time next_ready(Time now) const override {
    const Time free = output_free_ > now ? output_free_ : now;
    if (cb_full_) return free;
    if (held_packets_ > cb_.size()) return free;  // a class buffer holds packets: dequeue() pulls them
    if (cb_.empty()) return kNever;
    return cb_deadline_ > free ? cb_deadline_ : free;
  }

  // Kept as running totals (every arrival and every chunk changes them)
  // rather than summed over the buffers at each call. With the delay
  // distributions' runs of equal values, engine_bench chutq(policy=dcf):
  // 752 -> 715 instructions/packet (588e673; docs/performance-history.md,
  // engine step 2).
  uint64_t length_packets() const override { return held_packets_; }
  uint64_t length_bytes() const override { return held_bytes_; }
  size_t chunking_buffer_length() const { return cb_.size(); }
  size_t buffer_length(size_t i) const { return bufs_[i].size(); }

 private:
  // alpha of packet p at `now`, compared as doubles. When r <= 0: +inf
  // (expired_first) or -0.5, above pull()'s "nothing" mark of -1.
  double alpha(const Packet& p, Time now) const {
    const Time dl = deadline_of(p);
    if (dl == kNever) return 0.0;
    const Time r = dl - now;
    if (r <= 0) return cfg_.expired_first ? __builtin_inf() : -0.5;
    const double inv_r = 1.0 / static_cast<double>(r);
    switch (cfg_.policy) {
      case ChuTQPolicy::kDCF:
        return inv_r;
      case ChuTQPolicy::kTPF:
        return inv_r * static_cast<double>(p.length) / cfg_.mtu;
      case ChuTQPolicy::kCEF:
        return inv_r / static_cast<double>(p.length);
    }
    return inv_r;
  }

  bool fits(const Packet& p) const {
    return chunk_wire_size(cb_.size() + 1, cb_bytes_ + p.length, cfg_.shim) <= cfg_.mtu;
  }

  void move_to_cb(size_t i) {
    const Packet& p = bufs_[i].front();
    const Time dl = deadline_of(p);
    if (dl < cb_deadline_) cb_deadline_ = dl;
    cb_.push_back(p);
    cb_bytes_ += p.length;
    bufs_[i].drop_front();
  }

  void pull(Time now) {
    while (!cb_full_) {
      if (held_packets_ == cb_.size()) return;  // all class buffers empty
      size_t best = bufs_.size();
      double best_a = -1.0;
      for (size_t i = 0; i < bufs_.size(); ++i) {
        if (bufs_[i].empty()) continue;
        const double a = alpha(bufs_[i].front(), now);
        if (a > best_a) {
          best_a = a;
          best = i;
        }
      }
      if (best == bufs_.size()) return;  // all class buffers empty
      if (!fits(bufs_[best].front())) {
        cb_full_ = true;  // MTU excess: the chunk leaves at the next dequeue
        break;
      }
      move_to_cb(best);
    }
    // CEA: the chunk is closing; top it up with HoL packets that still fit,
    // shortest-delay class first. Runs on every pull until the chunk leaves,
    // so packets arriving meanwhile are candidates too.
    for (size_t i = 0; cfg_.cea && i < bufs_.size();) {
      if (!bufs_[i].empty() && fits(bufs_[i].front())) {
        move_to_cb(i);
        ++stats_.cea_packets;
        i = 0;
      } else {
        ++i;
      }
    }
  }

  void recompute_cb() {
    cb_full_ = false;
    cb_deadline_ = kNever;
    for (size_t k = 0; k < cb_.size(); ++k) {
      const Time dl = deadline_of(cb_.at(k));
      if (dl < cb_deadline_) cb_deadline_ = dl;
    }
  }

  ChuTQConfig cfg_;
  // Power-of-two rings (fifo_buffer.hh): index by mask, not by modulo.
  // Never full: enqueue() refuses packets beyond capacity_packets first.
  std::vector<PacketDeque> bufs_;
  PacketDeque cb_;
  uint64_t cb_bytes_ = 0;
  Time cb_deadline_ = kNever;
  bool cb_full_ = false;
  Time output_free_ = 0;
  uint64_t held_packets_ = 0, held_bytes_ = 0;  // class buffers + chunking buffer
};

}  // namespace tracelab
