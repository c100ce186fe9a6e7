// TLScfqQueue: Click adapter over tracelab::ScfqCore (core/scfq.hh). Everything but the
// class is TLCoreQueue's and TLQueueElement's; this file exports it.
#include <click/config.h>
#include "tlscfqqueue.hh"
ELEMENT_REQUIRES(userlevel TLCoreQueue)
EXPORT_ELEMENT(TLScfqQueue)
