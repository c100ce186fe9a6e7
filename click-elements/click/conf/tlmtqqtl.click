// MTQ/QTL: edge marker -> two congested nodes (TLMtqQtlQueue, each drained
// by an exact $RATE link) -> receiver-side EPLR check. IPv4 and IPv6.
//   click --simtime tlmtqqtl.click TRACE=x.pcap [RATE=...] [MTQ=us] [QTL=us] [D=us]
// run-examples.sh checks conservation: sent = received + marker errors +
// drops at both nodes.
require(package "tracelab");
define($TRACE trace.pcap, $RATE 3000000, $MTQ 8000, $QTL 10000, $D 10000, $OUT /dev/null);

sent :: Paint(0);
src :: FromDump($TRACE, STOP true, TIMING true) -> c :: Classifier(12/0800, 12/86dd);
c[0] -> Strip(14) -> CheckIPHeader -> sent;
c[1] -> Strip(14) -> sent;  // the marker and the queues parse IPv6 themselves
sent -> SetTimestamp -> tee :: Tee;
tee[0]
  -> mark :: TLMtqQtlMark(MTQ $MTQ, QTL $QTL)
  -> q1 :: TLMtqQtlQueue(50, RATE $RATE) -> TLExactUnqueue(RATE $RATE)
  -> q2 :: TLMtqQtlQueue(50, RATE $RATE) -> TLExactUnqueue(RATE $RATE)
  -> eplr :: TLEplrCheck(BUDGETS $D)
  -> ToDump($OUT, ENCAP IP);
tee[1] -> [1]eplr;

DriverManager(pause, wait 60s,
  print "sent=$(eplr.sent) received=$(eplr.received) late=$(eplr.late) worst_eplr=$(eplr.worst) marked=$(mark.marked) mark_errors=$(mark.errors) q1_drops=$(q1.drops) q1_mtq=$(q1.drops_mtq) q1_qtl=$(q1.drops_qtl) q1_overflow=$(q1.drops_overflow) q1_violations=$(q1.violations) q2_drops=$(q2.drops) q2_mtq=$(q2.drops_mtq) q2_qtl=$(q2.drops_qtl) q2_violations=$(q2.violations) held=$(q1.length)+$(q2.length)",
  stop);
