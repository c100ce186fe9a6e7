// TLExactUnqueue: a trace replayed as fast as a 10 Gb/s link allows. The
// last departure (busy_until, picoseconds) must equal sum(bytes) * 800 ps
// when all packets are queued at time 0 (TIMING false).
require(package "tracelab");
define($TRACE trace.pcap);

FromDump($TRACE, STOP true, TIMING false)
  -> q :: Queue(100000)
  -> link :: TLExactUnqueue(RATE 10000000000)
  -> Discard;

DriverManager(pause, wait 1s,
  print "count=$(link.count) bytes=$(link.bytes) span_ps=$(link.span)",
  stop);
