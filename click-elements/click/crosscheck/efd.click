// Cross-check (crosscheck.sh): TLEfdQueue over an exact link; arrivals,
// departures and drops dumped with nanosecond times.
require(package "tracelab");
define($TRACE trace.pcap, $RATE 300000, $CAPACITY 50, $THRESHOLD 30000, $ARR /dev/null, $DEP /dev/null, $DROPS /dev/null);
FromDump($TRACE, STOP true, TIMING true)
  -> Classifier(12/0800) -> Strip(14) -> CheckIPHeader
  -> SetTimestamp -> arr :: Tee -> q :: TLEfdQueue(CAPACITY $CAPACITY, THRESHOLD $THRESHOLD)
  -> TLExactUnqueue(RATE $RATE) -> SetTimestamp -> ToDump($DEP, ENCAP IP, NANO true);
arr[1] -> ToDump($ARR, ENCAP IP, NANO true);
q[1] -> SetTimestamp -> ToDump($DROPS, ENCAP IP, NANO true);
DriverManager(pause, wait 100s, stop);
