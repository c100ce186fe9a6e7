// TLXProtectQueue: X-Protect, p_ins = 0.01, 30 KB.
// A pcap (Ethernet) replayed in its own timing under --simtime, through a
// link of $RATE bit/s (default 300 kb/s, slow enough for the bundled real
// traces to queue and drop), written to $OUT. Run:
//   click --simtime tlxprotectqueue.click TRACE=some.pcap [RATE=...] [OUT=out.pcap]
require(package "tracelab");
define($TRACE trace.pcap, $OUT /dev/null, $RATE 300000);

FromDump($TRACE, STOP true, TIMING true)
  -> Strip(14) -> CheckIPHeader
  -> in :: Counter
  -> q :: TLXProtectQueue(CAPACITY 50, PROBABILITY 0.01, THRESHOLD 30000, SEED 1)
  -> link :: TLExactUnqueue(RATE $RATE)
  -> out :: Counter
  -> ToDump($OUT, ENCAP IP);

// After the trace ends, 10 simulated seconds let the queue drain.
DriverManager(pause, wait 10s,
  print "in=$(in.count) out=$(out.count) length=$(q.length) highwater=$(q.highwater_length) drops=$(q.drops) pushed_out=$(q.pushed_out) flows=$(q.flows)",
  stop);
