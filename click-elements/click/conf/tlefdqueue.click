// TLEfdQueue: EFD (BEFD, th 30 000 B); VARIANT pefd/efdack, HIGH/LOW las for the X+Y variants.
// The packet on the wire stays counted in the buffer until the link pulls the
// next (IN_SERVICE true, the default); IN_SERVICE=false lets it leave when
// pulled (Click's Queue), IN_SERVICE=<rate> until its transmission ends.
// A pcap (Ethernet) replayed in its own timing under --simtime, through a
// link of $RATE bit/s (default 300 kb/s, slow enough for the bundled real
// traces to queue and drop), written to $OUT. Run:
//   click --simtime tlefdqueue.click TRACE=some.pcap [RATE=...] [OUT=out.pcap]
require(package "tracelab");
define($TRACE trace.pcap, $OUT /dev/null, $RATE 300000, $IN_SERVICE true);

FromDump($TRACE, STOP true, TIMING true)
  -> Strip(14) -> CheckIPHeader
  -> in :: Counter
  -> q :: TLEfdQueue(CAPACITY 50, VARIANT befd, THRESHOLD 30000, IN_SERVICE $IN_SERVICE)
  -> link :: TLExactUnqueue(RATE $RATE)
  -> out :: Counter
  -> ToDump($OUT, ENCAP IP);

// After the trace ends, 10 simulated seconds let the queue drain.
DriverManager(pause, wait 10s,
  print "in=$(in.count) out=$(out.count) length=$(q.length) highwater=$(q.highwater_length) drops=$(q.drops) pushed_out=$(q.pushed_out) flows=$(q.flows) flows_highwater=$(q.flows_highwater)",
  stop);
