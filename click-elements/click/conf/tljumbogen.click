// JumboGen end to end: ingress (TLJumboGenEncap) -> 1 Gb/s link -> core
// router (TLJumboGenRed, partial drop) on a congested $CORE bit/s link ->
// egress (TLJumboGenDecap, shaping). Whole JumboGrams RED drops are
// decapsulated by `lost` so their packets can be counted.
//   click --simtime tljumbogen.click TRACE=x.pcap IN=in.pcap OUT=out.pcap [CORE=...]
// run-examples.sh checks: in = out + encap drops + packets removed or
// dropped in the core (conservation), and every packet out equals one
// packet in, byte for byte.
require(package "tracelab");
define($TRACE trace.pcap, $IN /dev/null, $OUT /dev/null, $CORE 200000);

tee :: Tee;
FromDump($TRACE, STOP true, TIMING true)
  -> Classifier(12/0800) -> Strip(14) -> CheckIPHeader
  -> in :: Counter -> tee;
tee[1] -> ToDump($IN, ENCAP IP);
tee[0]
  -> encap :: TLJumboGenEncap(MTU 8192, JFET 10000, KEY dst)
  -> TLExactUnqueue(RATE 1000000000)
  -> red :: TLJumboGenRed(MODE partial, MIN_TH 5, MAX_TH 15, W_Q 0.2, CAPACITY 40, SEED 1)
  -> TLExactUnqueue(RATE $CORE)
  -> decap :: TLJumboGenDecap(SHAPING true, ECN true)
  -> TLExactUnqueue(RATE 1000000000)
  -> out :: Counter
  -> ToDump($OUT, ENCAP IP);
red[1] -> lost :: TLJumboGenDecap(SHAPING false) -> Unqueue -> Discard;

DriverManager(pause, wait 60s,
  print "in=$(in.count) out=$(out.count) encap_drops=$(encap.drops) jumbograms=$(encap.jumbograms) mean_jumbogram_bytes=$(encap.mean_jumbogram_bytes) mean_wait_ns=$(encap.mean_wait_ns) red_drops=$(red.drops) selected=$(red.selected) partial_dropped=$(red.partial_dropped) missing=$(decap.missing) ce_marked=$(decap.ce_marked) lost_packets=$(lost.packets) lost_missing=$(lost.missing) lost_malformed=$(lost.malformed) held=$(encap.length)+$(red.length)+$(decap.length) malformed=$(decap.malformed)",
  stop);
