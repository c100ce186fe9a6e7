// Cross-check (crosscheck.sh): TLChunkQueue(chutq, CEA) over an exact
// 10 Gb/s link; arrivals and departing chunks dumped (no drops: 16384
// packets of room).
require(package "tracelab");
define($TRACE trace.pcap, $RATE 10000000000, $ARR /dev/null, $DEP /dev/null, $DROPS /dev/null);
FromDump($TRACE, STOP true, TIMING true)
  -> Classifier(12/0800) -> Strip(14) -> CheckIPHeader -> Paint(1)
  -> SetTimestamp -> arr :: Tee
  -> TLChunkQueue(chutq, TIMERS "50 100 200", BUDGETS "50 100 200", CEA true)
  -> TLExactUnqueue(RATE $RATE) -> SetTimestamp -> ToDump($DEP, ENCAP IP, NANO true);
arr[1] -> ToDump($ARR, ENCAP IP, NANO true);
Idle -> ToDump($DROPS, ENCAP IP, NANO true);
DriverManager(pause, wait 1s, stop);
