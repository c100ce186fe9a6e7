// TLFifoQueue: Click adapter over tracelab::FifoCore (core/fifo.hh). Everything but the
// class is TLCoreQueue's and TLQueueElement's; this file exports it.
#include <click/config.h>
#include "tlfifoqueue.hh"
ELEMENT_REQUIRES(userlevel TLCoreQueue)
EXPORT_ELEMENT(TLFifoQueue)
