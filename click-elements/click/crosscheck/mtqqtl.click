// Cross-check (crosscheck.sh): TLMtqQtlMark -> TLMtqQtlQueue over an exact
// link; arrivals (marked), departures (QTL written back) and drops dumped.
require(package "tracelab");
define($TRACE trace.pcap, $RATE 3000000, $CAPACITY 50, $MTQ 8000, $QTL 10000, $ARR /dev/null, $DEP /dev/null, $DROPS /dev/null);
FromDump($TRACE, STOP true, TIMING true)
  -> Classifier(12/0800) -> Strip(14) -> CheckIPHeader
  -> TLMtqQtlMark(MTQ $MTQ, QTL $QTL)
  -> SetTimestamp -> arr :: Tee -> q :: TLMtqQtlQueue($CAPACITY, RATE $RATE)
  -> TLExactUnqueue(RATE $RATE) -> SetTimestamp -> ToDump($DEP, ENCAP IP, NANO true);
arr[1] -> ToDump($ARR, ENCAP IP, NANO true);
q[1] -> SetTimestamp -> ToDump($DROPS, ENCAP IP, NANO true);
DriverManager(pause, wait 100s, stop);
