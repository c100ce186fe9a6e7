// TLChunkQueue -> exact 10 Gb/s link -> TLDechunk, on a real trace.
//   click --simtime tlchunkqueue.click TRACE=x.pcap IN=in.pcap OUT=out.pcap SCHEME=chutq
// Every IPv4 packet is class 1 (W_max = BUDGETS[1] = 100 us). The packets
// entering the queue are written to $IN, the restored ones to $OUT: the two
// files must hold the same packets byte for byte (run-examples.sh checks).
require(package "tracelab");
define($TRACE trace.pcap, $IN /dev/null, $OUT /dev/null, $SCHEME chutq);

tee :: Tee;
FromDump($TRACE, STOP true, TIMING true)
  -> Strip(14) -> CheckIPHeader -> Paint(1)
  -> in :: Counter -> tee;
tee[1] -> ToDump($IN, ENCAP IP);
tee[0]
  -> q :: TLChunkQueue($SCHEME, TIMERS "50 100 200", BUDGETS "50 100 200", CEA true)
  -> link :: TLExactUnqueue(RATE 10000000000)
  -> d :: TLDechunk
  -> out :: Counter
  -> ToDump($OUT, ENCAP IP);

DriverManager(pause, wait 10ms,
  print "in=$(in.count) out=$(out.count) chunks=$(q.chunks) mean_chunk_bytes=$(q.mean_chunk_bytes) length=$(q.length) drops=$(q.drops) violations=$(q.violations) max_excess_ps=$(q.max_excess) malformed=$(d.malformed)",
  stop);
